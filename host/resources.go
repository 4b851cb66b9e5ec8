package host

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// exactQueryKeys is the closed query vocabulary of exact reads
// (spec/host-api-v1alpha3.md §3.3), in the order of exactValues' values.
var exactQueryKeys = [...]string{"space", "group", "kind", "definitionVersion", "schemaDigest"}

// exactQuery reads r's exact-FormRef query: each key exactly once, no
// other key; group and kind must equal the path's when one is given.
func exactQuery(r *request, pathAPIVersion, pathKind string) (space string, ref form.FormRef, err error) {
	v, ok := exactValues(r.URL.RawQuery)
	if !ok {
		if v, err = parsedExactValues(r.URL.RawQuery); err != nil {
			return "", ref, err
		}
	}
	space = v[0]
	ref = form.FormRef{APIVersion: v[1], Kind: v[2], DefinitionVersion: v[3], SchemaDigest: v[4]}
	if err := checkSpace(space, "query space"); err != nil {
		return "", ref, err
	}
	if pathAPIVersion != "" && (ref.APIVersion != pathAPIVersion || ref.Kind != pathKind) {
		return "", ref, wire.Errorf(wire.InvalidArgument, "the query names %s %s but the path names %s %s; they must be equal", ref.APIVersion, ref.Kind, pathAPIVersion, pathKind)
	}
	return space, ref, nil
}

// exactValues reads the values of an exact query written plainly: five
// pairs, the five keys once each and unescaped, no ';', each value one
// url.QueryUnescape decodes — what url.ParseQuery reads the same way
// without building its map. It only accepts: any other query string is
// read by parsedExactValues, which alone refuses and says why
// (TestExactValuesAgree, FuzzExactValues; PERFORMANCE.md, log entry "The
// host's CPU per exact read"; repo decision 0040: a fast path only accepts).
func exactValues(raw string) (v [len(exactQueryKeys)]string, ok bool) {
	if strings.IndexByte(raw, ';') >= 0 {
		return v, false
	}
	var seen [len(exactQueryKeys)]bool
	for i := range exactQueryKeys {
		pair, rest, more := strings.Cut(raw, "&")
		if more != (i < len(exactQueryKeys)-1) {
			return v, false
		}
		raw = rest
		key, value, _ := strings.Cut(pair, "=")
		j := slices.Index(exactQueryKeys[:], key)
		if j < 0 || seen[j] {
			return v, false
		}
		seen[j] = true
		if v[j], ok = queryUnescape(value); !ok {
			return v, false
		}
	}
	return v, true
}

// queryUnescape decodes a query value as url.QueryUnescape does ('+' is
// a space, %XX a byte), in one pass over a value with something to
// decode; false for a broken escape, which url.QueryUnescape refuses.
func queryUnescape(s string) (string, bool) {
	n, plus := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return "", false
			}
			n++
			i += 2
		case '+':
			plus = true
		}
	}
	if n == 0 && !plus {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s) - 2*n)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			b.WriteByte(byte(unhex(s[i+1])<<4 | unhex(s[i+2])))
			i += 2
		case '+':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// unhex is the value of the hex digit c, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// parsedExactValues reads an exact query through url.ParseQuery, refusing
// one that is not valid URL encoding (url.Values would silently drop the
// broken pair), a key outside the vocabulary and a key not sent exactly
// once.
func parsedExactValues(raw string) (v [len(exactQueryKeys)]string, err error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return v, wire.Errorf(wire.InvalidArgument, "the query string is not valid URL encoding: %v; percent-encode each value", err).WithHostCode("query_encoding")
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(exactQueryKeys[:], k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return v, wire.Errorf(wire.InvalidArgument, "query key(s) %s are not part of the exact query (space, group, kind, definitionVersion, schemaDigest)", strings.Join(unknown, ", ")).WithHostCode("query_unknown_key")
	}
	for i, k := range exactQueryKeys {
		if len(q[k]) != 1 {
			return v, wire.Errorf(wire.InvalidArgument, "query key %s must appear exactly once", k).WithHostCode("query_key_count")
		}
		v[i] = q[k][0]
	}
	return v, nil
}

// addressed resolves a name-addressed route: path + exact query, the Form
// installed, the key in the caller's tenant.
func (s *Server) addressed(r *request) (store.Key, form.FormRef, error) {
	apiVersion, kind, name, err := pathIdentity(r, true)
	if err != nil {
		return store.Key{}, form.FormRef{}, err
	}
	space, ref, err := exactQuery(r, apiVersion, kind)
	if err != nil {
		return store.Key{}, ref, err
	}
	if err := form.ValidateName(name); err != nil {
		return store.Key{}, ref, wire.Errorf(wire.InvalidArgument, "path name: %v", err)
	}
	if _, err := s.checkRef(r, ref, "query"); err != nil {
		return store.Key{}, ref, err
	}
	return store.Key{Tenant: r.caller.Tenant, Space: space, APIVersion: apiVersion, Kind: kind, Name: name}, ref, nil
}

// read answers GET /resources/…/{name} (spec/host-api-v1alpha3.md §3.4 (6)).
func (s *Server) read(r *request) (answer, error) {
	k, ref, err := s.addressed(r)
	if err != nil {
		return answer{}, err
	}
	a, err := s.exactAnswer(r.Context(), k, ref)
	if errors.Is(err, store.ErrNotFound) {
		return answer{}, lifecycle.NotFound(k, ref)
	}
	if err != nil {
		return answer{}, err
	}
	return answer{status: 200, etag: revisionETag(a.Revision), body: answerBody(a)}, nil
}

// exactAnswer is the answer of the resource at k created under exactly
// ref, through the store's fast path when it has one (store.ExactReader),
// else View.
func (s *Server) exactAnswer(ctx context.Context, k store.Key, ref form.FormRef) (*store.Answer, error) {
	if er, ok := s.cfg.Store.(store.ExactReader); ok {
		return er.ExactAnswer(ctx, k, ref)
	}
	return store.ExactAnswerByView(ctx, s.cfg.Store, k, ref)
}

// bodyIntake decodes the body of validate and prepare, which names its
// resource itself, and takes it in (spec/host-api-v1alpha3.md §3.4 (3), (4)).
func (s *Server) bodyIntake(r *request) (req wire.ResourceRequest, it *intake, err error) {
	if err := decodeBody(r.body, &req); err != nil {
		return req, nil, err
	}
	it, err = s.intake(r, coreOf(req), "", "", "")
	return req, it, err
}

// validate answers POST /resources/validate: identity problems are
// envelopes, spec problems a 200 with diagnostics (spec/host-api-v1alpha3.md §3.4 (3)).
func (s *Server) validate(r *request) (answer, error) {
	_, it, err := s.bodyIntake(r)
	if err != nil {
		return answer{}, err
	}
	resp := wire.ValidateResponse{Valid: len(it.diags) == 0, Diagnostics: []wire.Diagnostic{}}
	for i, d := range it.diags {
		if i == wire.MaxDiagnostics {
			break
		}
		resp.Diagnostics = append(resp.Diagnostics, wire.Diagnostic{Severity: "error", Field: form.Truncate(d.Pointer, maxPointerBytes), Message: d.Message})
	}
	return jsonAnswer(200, resp), nil
}

// prepare answers POST /resources/prepare: the review binding (spec/host-api-v1alpha3.md §3.4 (4)).
func (s *Server) prepare(r *request) (answer, error) {
	req, it, err := s.bodyIntake(r)
	if err != nil {
		return answer{}, err
	}
	if len(it.diags) > 0 {
		return answer{}, specError(it.diags)
	}
	fence, hasFence, err := generationFence(r, "")
	if err != nil {
		return answer{}, err
	}
	// Only a resource under exactly this FormRef binds the digest: a name
	// held under another is prepared as a create, or is not found for an
	// update, so the exact read (one statement, store.ExactReader) says all.
	uid, gen := "", int64(0)
	existing, err := s.exactAnswer(r.Context(), it.key, it.ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if hasFence {
			return answer{}, lifecycle.NotFound(it.key, it.ref)
		}
	case err != nil:
		return answer{}, err
	case !hasFence:
		return answer{}, wire.Errorf(wire.InvalidArgument, "%s %q exists (generation %d): preparing an update needs the %s header", it.key.Kind, it.key.Name, existing.Generation, wire.HeaderGeneration).WithHostCode("fence_required")
	case fence != existing.Generation:
		return answer{}, wire.Errorf(wire.GenerationConflict, "expected generation %d but %s %q is at generation %d", fence, it.key.Kind, it.key.Name, existing.Generation)
	default:
		uid, gen = existing.UID, existing.Generation
	}
	req.Spec = it.canonical
	return answer{status: 200, body: encodePrepare(&wire.PrepareResponse{Resource: req, Review: wire.PrepareReview{
		PrepareDigest: s.engine.PrepareDigest(r.lane.Name, it.key, it.ref, it.specDigest, uid, gen), SpecDigest: it.specDigest,
	}})}, nil
}

// generationFence reads Takoform-Expected-Generation and an optional body
// value, which must agree when both are sent.
func generationFence(r *request, body string) (int64, bool, error) {
	h := r.Header.Get(wire.HeaderGeneration)
	if h == "" && body == "" {
		return 0, false, nil
	}
	if h != "" && body != "" && h != body {
		return 0, false, wire.Errorf(wire.InvalidArgument, "the %s header (%s) and the body's expected generation (%s) disagree", wire.HeaderGeneration, h, body)
	}
	v := h
	if v == "" {
		v = body
	}
	n, err := parseCounter(v)
	if err != nil {
		return 0, false, wire.Errorf(wire.InvalidArgument, "expected generation: %v", err)
	}
	return n, true, nil
}

// ifNoneMatch reports a create precondition; any value but * is refused.
func ifNoneMatch(r *request) (bool, error) {
	v, ok := r.Header["If-None-Match"]
	if !ok {
		return false, nil
	}
	if len(v) != 1 || v[0] != "*" {
		return false, wire.Errorf(wire.InvalidArgument, "If-None-Match must be exactly *").WithHostCode("if_none_match")
	}
	return true, nil
}

func coreOf(req wire.ResourceRequest) core {
	return core{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: req.Spec}
}

// run commits a mutation now, or accepts it as an operation when it cannot
// finish within the synchronous budget (spec/host-api-v1alpha3.md §4).
func (s *Server) run(r *request, m *lifecycle.Mutation) (answer, error) {
	m.Principal, m.Lane = r.caller.Principal, r.lane.Name
	delay := s.cfg.ProvisioningDelay
	async := delay > s.cfg.SyncBudget
	if s.probe(r) == probeAsync {
		async, m.PollDriven = true, true
	}
	if m.Action == store.ActionObserve {
		// Observe answers 200 only; it is never an operation (spec/host-api-v1alpha3.md §4).
		async, delay = false, 0
	}
	if !async && delay > 0 {
		// A provisioning delay within the budget is waited out before the
		// commit, outside any transaction; a key already answered replays
		// at once instead of waiting it out first.
		if err := s.replayBeforeDelay(r); err != nil {
			return answer{}, err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return answer{}, wire.Errorf(wire.DeadlineExceeded, "the request was cancelled before its mutation committed; this request wrote nothing: retry it with the same Idempotency-Key to get the key's answer")
		}
	}
	var out answer
	s.engine.BeforeCommit(m)
	if err := s.engine.Preload(r.Context(), s.cfg.Store, m); err != nil {
		s.log.Debug("preload", "key", m.Key, "err", err)
	}
	request := *m
	// A synchronous create expects its name free (If-None-Match: *).
	free := m.Action == store.ActionApply && m.Create && !async
	err := s.updateKey(r, m.Key, free, func(tx store.Tx, st *store.KeyState) error {
		m := new(lifecycle.Mutation) // the store may run fn again (a serialization failure): start from the request each time
		*m = request
		now := s.cfg.Now()
		if async {
			ans, opID, err := s.accept(tx, m, st, now, delay)
			if err != nil {
				return err
			}
			out = ans
			return s.record(tx, r, ans, "", opID)
		}
		o, err := s.engine.Commit(tx, m, st, now)
		if err != nil {
			return err
		}
		out = outcomeAnswer(o)
		return s.record(tx, r, out, o.UID, "")
	})
	return out, err
}
