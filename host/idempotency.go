package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// idemContext is the replay namespace and fingerprint of one request
// (spec/host-api-v1alpha3.md §3.5): (tenant, principal, space, key) and a digest of method,
// request target, preconditions and body bytes.
type idemContext struct {
	space       string
	key         string
	fingerprint string
}

// errReplay carries a recorded answer found inside a mutation's
// transaction (a concurrent twin committed first).
type errReplay struct{ ans answer }

func (e *errReplay) Error() string { return "replay" }

// bodySpace reads metadata.space for the replay namespace; a body that is
// not strict JSON has none ("") and is refused by the route itself.
func bodySpace(r *request) string {
	if ijson.Check(r.body) != nil {
		return ""
	}
	r.bodyChecked = true
	if space, ok := readBodySpace(r.body); ok {
		return space
	}
	return unmarshalBodySpace(r.body)
}

// unmarshalBodySpace is bodySpace's library read (encoding/json): what
// readBodySpace declines, and its test oracle.
func unmarshalBodySpace(body []byte) string {
	var head struct {
		Metadata struct {
			Space string `json:"space"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &head) != nil {
		return ""
	}
	return head.Metadata.Space
}

// readBodySpace is bodySpace's json.Unmarshal by an ijson.Reader: the
// same metadata.space, false where it cannot tell (a member name
// encoding/json would match without case, or outside ASCII; an escaped
// string; a value of another type), for json.Unmarshal to read
// (TestBodySpaceAgreement, FuzzBodySpaceAgreement).
func readBodySpace(body []byte) (string, bool) {
	rd := ijson.NewReader(body)
	space := ""
	rd.Object()
	for name, ok := rd.MemberName(); ok; name, ok = rd.MemberName() {
		switch {
		case string(name) == "metadata":
			rd.Object()
			for name, ok := rd.MemberName(); ok; name, ok = rd.MemberName() {
				switch {
				case string(name) == "space":
					space = rd.StringCopy()
				case !plainOther(name, "space"):
					rd.Fail()
				default:
					rd.Skip()
				}
			}
		case !plainOther(name, "metadata"):
			rd.Fail()
		default:
			rd.Skip()
		}
	}
	return space, rd.OK()
}

// plainOther reports whether name is ASCII and not want in any case (a
// name encoding/json surely does not match to want's field).
func plainOther(name []byte, want string) bool {
	for _, c := range name {
		if c >= 0x80 {
			return false
		}
	}
	return !strings.EqualFold(string(name), want)
}

func querySpace(r *request) string { return r.URL.Query().Get("space") }

func noSpace(*request) string { return "" }

func fingerprint(r *request) string {
	var buf [1024]byte
	b := buf[:0]
	for _, part := range [...]string{r.Method, r.URL.RequestURI(), r.Header.Get("If-Match"), r.Header.Get("If-None-Match"), r.Header.Get(wire.HeaderGeneration)} {
		b = append(b, part...)
		b = append(b, 0)
	}
	sum := sha256.Sum256(append(b, r.body...))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// idempotent wraps a mutating route: the Idempotency-Key header is
// required; a recorded answer for the same namespace and fingerprint is
// replayed byte-identically; the same key with another fingerprint is
// invalid_argument. The record is looked up inside the route's one write
// transaction (update, updateKey), under the key's lock, never before it
// (spec/decisions/0029-one-read-per-mutation.md). Successful answers are
// recorded by the route inside that transaction (record); refusals are
// recorded here, in a transaction that finds a twin's record first,
// except retryable and internal ones, which would otherwise replay forever.
func (s *Server) idempotent(space func(*request) string, h route) route {
	return func(r *request) (answer, error) {
		if len(r.Header.Values(wire.HeaderIdempotency)) > 1 {
			return answer{}, wire.Errorf(wire.InvalidArgument, "send exactly one Idempotency-Key header")
		}
		key := r.Header.Get(wire.HeaderIdempotency)
		if key == "" || len(key) > 255 || strings.ContainsAny(key, "\x00\r\n") {
			return answer{}, wire.Errorf(wire.InvalidArgument, "the Idempotency-Key header is required on this route (1..255 characters)")
		}
		r.idem = &idemContext{space: space(r), key: key, fingerprint: fingerprint(r)}
		ans, err := h(r)
		var rp *errReplay
		if errors.As(err, &rp) {
			return rp.ans, nil
		}
		if err == nil {
			return ans, nil
		}
		var we *wire.Error
		if !errors.As(err, &we) || we.Code == wire.InternalError || wire.Taxonomy[we.Code].Retryable {
			return answer{}, err
		}
		refusal := s.errorAnswer(r, err)
		recErr := s.update(r, func(tx store.Tx) error { return s.record(tx, r, refusal, "", "") })
		if errors.As(recErr, &rp) {
			return rp.ans, nil // a twin recorded first: its answer is the key's
		}
		if errors.As(recErr, &we) {
			return answer{}, recErr // the key was used for another request meanwhile
		}
		if recErr != nil {
			s.log.Error("record refusal", "request", r.id, "err", recErr)
		}
		return refusal, nil
	}
}

func (s *Server) replay(r *request, rec *store.Idempotency) (answer, error) {
	if rec.Fingerprint != r.idem.fingerprint {
		return answer{}, wire.Errorf(wire.InvalidArgument, "Idempotency-Key %q was used for a different request (method, target, preconditions or body differ); use a new key", r.idem.key).WithHostCode("idempotency_key_reused")
	}
	a := answer{status: rec.Status, etag: rec.ETag}
	if rec.Status >= 400 {
		noteReplay(r, rec.Body)
	}
	if rec.Status != 204 {
		a.body = rec.Body
	}
	return a, nil
}

// update runs fn in the one write transaction of a mutating request, after
// checkReplayIn: a recorded answer ends it as errReplay. It runs to the end
// even when the caller goes away (the outcome is recorded).
func (s *Server) update(r *request, fn func(tx store.Tx) error) error {
	var found *store.Idempotency
	err := s.cfg.Store.Update(context.WithoutCancel(r.Context()), func(tx store.Tx) error {
		rec, err := s.recordIn(tx, r)
		if found = rec; err != nil || rec != nil {
			return err
		}
		return fn(tx)
	})
	return s.afterUpdate(r, found, err)
}

// updateKey is update for a mutation of the resource at k: the replay
// record and k's state come in one read (store.Tx.KeyState), which fn
// gets; with free, a mutation that expects k free and its key unused
// (store.Tx.KeyStateExpectFree), which the store may verify with the
// commit instead.
func (s *Server) updateKey(r *request, k store.Key, free bool, fn func(tx store.Tx, st *store.KeyState) error) error {
	var found *store.Idempotency
	err := s.cfg.Store.Update(context.WithoutCancel(r.Context()), func(tx store.Tx) error {
		var replay *store.IdempotencyKey
		if r.idem != nil {
			replay = &store.IdempotencyKey{Lane: r.lane.Name, Tenant: r.caller.Tenant, Principal: r.caller.Principal, Space: r.idem.space, Key: r.idem.key}
		}
		keyState := tx.KeyState
		if free {
			keyState = tx.KeyStateExpectFree
		}
		st, err := keyState(k, replay)
		if err != nil {
			return err
		}
		if found = st.Replay; found != nil {
			return nil
		}
		return fn(tx, st)
	})
	if err == nil && found == nil && s.cfg.Committed != nil {
		s.cfg.Committed(k)
	}
	return s.afterUpdate(r, found, err)
}

// afterUpdate answers a mutation's Update: a record found inside it (the
// function wrote nothing and returned nil, so a group-commit batch sharing
// the replay is not rolled back and run again with savepoints,
// spec/decisions/0023-savepoints-on-failure.md) becomes errReplay or the
// key-reuse refusal; otherwise err as it is.
func (s *Server) afterUpdate(r *request, found *store.Idempotency, err error) error {
	if err != nil || found == nil {
		return err
	}
	return s.replayFound(r, found)
}

// recordIn reads a mutation's idempotency record inside its transaction:
// nil when the request has no key or nothing is recorded under it.
func (s *Server) recordIn(tx store.Tx, r *request) (*store.Idempotency, error) {
	if r.idem == nil {
		return nil, nil
	}
	rec, err := tx.Idempotency(r.lane.Name, r.caller.Tenant, r.caller.Principal, r.idem.space, r.idem.key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return rec, err
}

// replayBeforeDelay looks for the mutation's idempotency record in a read
// transaction, before a synchronous provisioning delay is waited out: a
// found record is errReplay (or the key-reuse refusal), so a retry of a
// committed mutation answers at once. The mutation's own transaction still
// looks again under the key's lock (updateKey).
func (s *Server) replayBeforeDelay(r *request) error {
	if r.idem == nil {
		return nil
	}
	return s.cfg.Store.View(r.Context(), func(tx store.Tx) error { return s.checkReplayIn(tx, r) })
}

// checkReplayIn looks for a record inside a mutation's transaction and
// turns a hit into errReplay (or the key-reuse refusal).
func (s *Server) checkReplayIn(tx store.Tx, r *request) error {
	rec, err := s.recordIn(tx, r)
	if err != nil {
		return err
	}
	return s.replayFound(r, rec)
}

// replayFound turns a record found (rec not nil) into errReplay or the
// key-reuse refusal.
func (s *Server) replayFound(r *request, rec *store.Idempotency) error {
	if rec == nil {
		return nil
	}
	ans, err := s.replay(r, rec)
	if err != nil {
		return err
	}
	return &errReplay{ans: ans}
}

// record claims the request's replay key for an answer, bound to the
// incarnation (uid) or operation it reports. The claim is insert-only: if
// a twin (the same key sent to another replica at the same moment)
// recorded first, the transaction must not commit — record returns the
// twin's answer as errReplay, so the key executes once.
func (s *Server) record(tx store.Tx, r *request, a answer, boundUID, boundOp string) error {
	if r.idem == nil {
		return nil
	}
	err := tx.ClaimIdempotency(&store.Idempotency{
		Lane: r.lane.Name, Tenant: r.caller.Tenant, Principal: r.caller.Principal, Space: r.idem.space, Key: r.idem.key,
		Fingerprint: r.idem.fingerprint, Status: a.status, ETag: a.etag, Body: a.body,
		BoundUID: boundUID, BoundOperation: boundOp, CreatedAt: s.cfg.Now(),
	})
	if errors.Is(err, store.ErrConflict) {
		if rerr := s.checkReplayIn(tx, r); rerr != nil {
			return rerr
		}
	}
	return err
}
