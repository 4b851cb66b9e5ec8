package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

// Precondition is the fence of a mutation (spec/host-api-v1alpha3.md §1.5, §3.2).
type Precondition struct {
	// Generation is sent as Takoform-Expected-Generation (canonical positive
	// decimal). On Apply and Import, "" means create intent: If-None-Match: *
	// ("the name must be free in my tenant"). Observe and Delete require it.
	Generation string
	// UID is the incarnation the caller recorded; required with Generation
	// because it is bound into the idempotency key (IdempotencyKey). It is
	// not sent by itself: Apply sends wire.ApplyRequest.ExpectedUID, which,
	// when set, must equal it, and only then is the answer's uid required
	// to equal it. Elsewhere (update without expectedUid, fenced import,
	// observe) compare the answer's metadata.uid yourself: another UID is
	// another incarnation under the same name (spec/host-api-v1alpha3.md §1.4, §5.5).
	UID string
	// Revision, Delete only and optional, is sent as If-Match: "<revision>".
	Revision string
}

// fence validates p for op and reports create intent.
func (p Precondition) fence(op string, createAllowed, revisionAllowed bool) (bool, error) {
	if p.Generation == "" {
		if !createAllowed {
			return false, fmt.Errorf("takoform: %s needs a generation fence (Precondition.Generation)", op)
		}
		if p.UID != "" || p.Revision != "" {
			return false, fmt.Errorf("takoform: %s: create intent (no generation) carries no UID or revision", op)
		}
		return true, nil
	}
	switch {
	case !CanonicalPositive(p.Generation):
		return false, fmt.Errorf("takoform: %s: generation %q is not a canonical positive decimal", op, p.Generation)
	case !wire.ValidUID(p.UID):
		return false, fmt.Errorf("takoform: %s: a generation fence needs the recorded UID (Precondition.UID), got %q", op, p.UID)
	case p.Revision != "" && !revisionAllowed:
		return false, fmt.Errorf("takoform: %s: If-Match (Precondition.Revision) is sent only on delete", op)
	case p.Revision != "" && !CanonicalPositive(p.Revision):
		return false, fmt.Errorf("takoform: %s: revision %q is not a canonical positive decimal", op, p.Revision)
	}
	return false, nil
}

// Mutation is the answer of apply, import or delete: a synchronous result
// (Resource and ETag for 200/201 of apply and import; nothing for 204 of
// delete) or an accepted operation (202, Operation set). Wait for an
// operation with WaitOperation or use the *AndWait helpers.
type Mutation struct {
	Status         int             // 200, 201, 202 or 204
	Resource       *wire.Resource  // verified resource of a 200/201
	ETag           string          // the 200/201's ETag, the quoted revision
	Operation      *wire.Operation // the accepted operation of a 202
	IdempotencyKey string          // the key sent; replaying it is safe
	retryAfter     string          // the 202's Retry-After: the first poll's wait
	exp            expectation     // what the operation's result must be
}

// Accepted reports whether the host answered 202 with an operation.
func (m *Mutation) Accepted() bool { return m.Operation != nil }

// expectation is what a resource answer must be.
type expectation struct {
	addr  Address
	uid   string // expected UID, "" for any
	rule  fenceRule
	fence string
	etag  bool // ETag required (read, synchronous apply/import)
}

// checkCore validates the identity of a request body before any HTTP call.
func checkCore(op, apiVersion, kind string, fr wire.FormReference, md wire.Metadata, spec json.RawMessage) (Address, error) {
	a := Address{Space: md.Space, Ref: fr.FormRef, Name: md.Name}
	if err := a.Validate(); err != nil {
		return a, fmt.Errorf("takoform: %s: %w", op, err)
	}
	switch {
	case apiVersion != a.Ref.APIVersion || kind != a.Ref.Kind:
		return a, fmt.Errorf("takoform: %s: apiVersion %q and kind %q must equal form.formRef's %q and %q", op, apiVersion, kind, a.Ref.APIVersion, a.Ref.Kind)
	case fr.PackageDigest != "" && !ijson.ValidDigest(fr.PackageDigest):
		return a, fmt.Errorf("takoform: %s: form.packageDigest %q is not a digest", op, fr.PackageDigest)
	case !isObject(spec):
		return a, fmt.Errorf("takoform: %s: spec must be a JSON object", op)
	}
	return a, nil
}

// encodeBody renders a request body as compact JSON (no HTML escaping)
// and checks it is strict I-JSON before it is sent. A request with a
// hand-written encoder (wire's AppendWire) is written by it when it can.
func encodeBody(op string, v any) ([]byte, error) {
	if a, ok := v.(interface{ AppendWire([]byte) ([]byte, bool) }); ok {
		if body, ok := a.AppendWire(make([]byte, 0, 512)); ok {
			return checkedBody(op, body)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("takoform: %s: encode the request: %w", op, err)
	}
	return checkedBody(op, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func checkedBody(op string, body []byte) ([]byte, error) {
	if err := ijson.Check(body); err != nil {
		return nil, fmt.Errorf("takoform: %s: the request is not strict I-JSON: %w", op, err)
	}
	return body, nil
}

func jsonRequest(op, method, path string, body []byte) *request {
	return &request{op: op, method: method, path: path, body: body, ctype: wire.ContentTypeJSON, header: http.Header{}}
}

// Forms asks whether the host serves the exact FormRef ref in space
// (route 1, GET {api}/forms with the exact query; spec/host-api-v1alpha3.md §3.4 (1)). The
// answer holds at most one entry, about exactly ref.
func (c *Client) Forms(ctx context.Context, space string, ref form.FormRef) (*wire.FormsResponse, error) {
	if err := checkScope("forms", space, ref); err != nil {
		return nil, err
	}
	r := &request{op: "forms", method: http.MethodGet, path: c.lane.APIBase + "/forms", query: exactQuery(space, ref)}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var out wire.FormsResponse
	if err := c.decodeAnswer(r, resp, &out, "forms response", "/forms"); err != nil {
		return nil, err
	}
	if err := checkForms(&out, resp.body, ref); err != nil {
		return nil, c.protocolError(r, resp.status, "the forms answer is not about the FormRef asked for", err)
	}
	return &out, nil
}

var formOperations = []string{"create", "read", "update", "delete", "import", "observe", "refresh"}

func checkForms(out *wire.FormsResponse, body []byte, ref form.FormRef) error {
	if len(out.Forms) > 1 {
		return fmt.Errorf("%d entries; at most one", len(out.Forms))
	}
	if len(out.Forms) == 0 {
		return nil
	}
	tree, _ := ijson.Decode(body)
	var ptrs []string
	for _, m := range []string{"identity", "definitionKnown", "installed", "executable", "activated", "availableToPrincipal", "operations"} {
		ptrs = append(ptrs, "/forms/0/"+m)
	}
	if m := missingMembers(tree, ptrs...); len(m) > 0 {
		return fmt.Errorf("required member %s is absent or null", m[0])
	}
	f := out.Forms[0]
	if f.Identity.FormRef != ref {
		return fmt.Errorf("identity {%s} is not {%s}", f.Identity.FormRef, ref)
	}
	for _, o := range f.Operations {
		if !slices.Contains(formOperations, o) {
			return fmt.Errorf("operation %q is not in the lane vocabulary", o)
		}
	}
	return nil
}

// FormDefinition fetches the desired contract of the exact FormRef ref
// (route 2, GET {api}/form-definitions/{formGroup}/{formVersion}/{kind}
// with the exact query; spec/host-api-v1alpha3.md §3.4 (2)). DesiredSchema is the installed
// definition's own bytes.
func (c *Client) FormDefinition(ctx context.Context, space string, ref form.FormRef) (*wire.FormDefinitionResponse, error) {
	if err := checkScope("form-definition", space, ref); err != nil {
		return nil, err
	}
	g, err := groupPath(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("takoform: form-definition: %w", err)
	}
	k, err := segment("kind", ref.Kind)
	if err != nil {
		return nil, err
	}
	r := &request{op: "form-definition", method: http.MethodGet, path: c.lane.APIBase + "/form-definitions/" + g + "/" + k, query: exactQuery(space, ref)}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var out wire.FormDefinitionResponse
	if err := c.decodeAnswer(r, resp, &out, "form definition response", "/identity", "/desiredSchema"); err != nil {
		return nil, err
	}
	switch {
	case out.Identity.FormRef != ref:
		return nil, c.protocolError(r, resp.status, "the definition is not the FormRef asked for", fmt.Errorf("identity {%s} is not {%s}", out.Identity.FormRef, ref))
	case !isObject(out.DesiredSchema):
		return nil, c.protocolError(r, resp.status, "desiredSchema is not an object", nil)
	}
	return &out, nil
}

func checkScope(op, space string, ref form.FormRef) error {
	if err := spaceid.Validate(space); err != nil {
		return fmt.Errorf("takoform: %s: %w", op, err)
	}
	if err := ref.Validate(); err != nil {
		return fmt.Errorf("takoform: %s: %w", op, err)
	}
	return nil
}

// sendOK performs a route that answers 200 only.
func (c *Client) sendOK(ctx context.Context, r *request) (*response, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := c.expectStatus(r, resp, http.StatusOK); err != nil {
		return nil, err
	}
	return resp, nil
}

// Validate checks a desired state without minting any digest (route 3,
// POST {api}/resources/validate; spec/host-api-v1alpha3.md §3.4 (3)). Spec problems are a
// 200 with valid:false and diagnostics; identity problems are errors.
func (c *Client) Validate(ctx context.Context, req wire.ResourceRequest) (*wire.ValidateResponse, error) {
	if _, err := checkCore("validate", req.APIVersion, req.Kind, req.Form, req.Metadata, req.Spec); err != nil {
		return nil, err
	}
	body, err := encodeBody("validate", req)
	if err != nil {
		return nil, err
	}
	r := jsonRequest("validate", http.MethodPost, c.lane.APIBase+"/resources/validate", body)
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var out wire.ValidateResponse
	if err := c.decodeAnswer(r, resp, &out, "validate response", "/valid", "/diagnostics"); err != nil {
		return nil, err
	}
	if len(out.Diagnostics) > wire.MaxDiagnostics {
		return nil, c.protocolError(r, resp.status, fmt.Sprintf("%d diagnostics; at most %d", len(out.Diagnostics), wire.MaxDiagnostics), nil)
	}
	for i, d := range out.Diagnostics {
		if (d.Severity != "error" && d.Severity != "warning") || d.Message == "" {
			return nil, c.protocolError(r, resp.status, fmt.Sprintf("diagnostics[%d] has severity %q or an empty message; want error or warning and a message", i, d.Severity), nil)
		}
	}
	return &out, nil
}

// Prepare binds a desired state for review (route 4, POST
// {api}/resources/prepare; spec/host-api-v1alpha3.md §3.4 (4)). expectedGeneration ("" for a
// resource that does not exist yet) is sent as Takoform-Expected-Generation.
// The echo must be the exact identity asked for, and review.specDigest must
// be the digest of the echoed (materialised) spec.
func (c *Client) Prepare(ctx context.Context, req wire.ResourceRequest, expectedGeneration string) (*wire.PrepareResponse, error) {
	a, err := checkCore("prepare", req.APIVersion, req.Kind, req.Form, req.Metadata, req.Spec)
	if err != nil {
		return nil, err
	}
	if expectedGeneration != "" && !CanonicalPositive(expectedGeneration) {
		return nil, fmt.Errorf("takoform: prepare: generation %q is not a canonical positive decimal", expectedGeneration)
	}
	body, err := encodeBody("prepare", req)
	if err != nil {
		return nil, err
	}
	r := jsonRequest("prepare", http.MethodPost, c.lane.APIBase+"/resources/prepare", body)
	if expectedGeneration != "" {
		r.header.Set(wire.HeaderGeneration, expectedGeneration)
	}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var out wire.PrepareResponse
	if err := c.decodeAnswer(r, resp, &out, "prepare response", "/resource", "/review"); err != nil {
		return nil, err
	}
	if err := checkPrepared(&out, a); err != nil {
		return nil, c.protocolError(r, resp.status, "the prepare answer is not the one asked for", err)
	}
	return &out, nil
}

func checkPrepared(out *wire.PrepareResponse, a Address) error {
	e := out.Resource
	switch {
	case e.APIVersion != a.Ref.APIVersion || e.Kind != a.Ref.Kind || e.Form.FormRef != a.Ref:
		return fmt.Errorf("the echo names {%s} as %s %s, not {%s}", e.Form.FormRef, e.APIVersion, e.Kind, a.Ref)
	case e.Metadata.Name != a.Name || e.Metadata.Space != a.Space:
		return fmt.Errorf("the echo names %q in space %q, not %q in %q", e.Metadata.Name, e.Metadata.Space, a.Name, a.Space)
	case !isObject(e.Spec):
		return errors.New("the echoed spec is not an object")
	case !ijson.ValidDigest(out.Review.PrepareDigest) || !ijson.ValidDigest(out.Review.SpecDigest):
		return errors.New("review.prepareDigest or review.specDigest is not a digest")
	}
	d, err := ijson.Digest(e.Spec)
	if err != nil {
		return err
	}
	if d != out.Review.SpecDigest {
		return fmt.Errorf("review.specDigest %s is not the digest %s of the echoed spec", out.Review.SpecDigest, d)
	}
	return nil
}

// Apply creates or updates a resource (route 5, PUT
// {api}/resources/{formGroup}/{formVersion}/{kind}/{name}; spec/host-api-v1alpha3.md §3.4 (5)).
// With pre.Generation empty it is a create (If-None-Match: *; no
// expectedUid or expectedGeneration in req); otherwise an update fenced by
// Takoform-Expected-Generation (req.ExpectedGeneration, if set, must agree)
// and, when req.ExpectedUID is set (it must equal pre.UID), by expectedUid —
// then the answer's uid must equal it. The Idempotency-Key is
// IdempotencyKey(KeyApply, …). A create answers 201 (generation 1), an
// update 200 (the fenced generation or the next), either may answer 202.
func (c *Client) Apply(ctx context.Context, req wire.ApplyRequest, pre Precondition) (*Mutation, error) {
	a, err := checkCore("apply", req.APIVersion, req.Kind, req.Form, req.Metadata, req.Spec)
	if err != nil {
		return nil, err
	}
	create, err := pre.fence("apply", true, false)
	if err != nil {
		return nil, err
	}
	switch {
	case !ijson.ValidDigest(req.Review.PrepareDigest):
		return nil, fmt.Errorf("takoform: apply: review.prepareDigest %q is not a digest; call Prepare first", req.Review.PrepareDigest)
	case create && (req.ExpectedUID != "" || req.ExpectedGeneration != ""):
		return nil, errors.New("takoform: apply: a create carries no expectedUid or expectedGeneration")
	case req.ExpectedGeneration != "" && req.ExpectedGeneration != pre.Generation:
		return nil, fmt.Errorf("takoform: apply: expectedGeneration %q disagrees with the fence %q", req.ExpectedGeneration, pre.Generation)
	case req.ExpectedUID != "" && req.ExpectedUID != pre.UID:
		return nil, fmt.Errorf("takoform: apply: expectedUid %q disagrees with the recorded UID %q", req.ExpectedUID, pre.UID)
	}
	exp := expectation{addr: a, uid: req.ExpectedUID, rule: genAdvanced, fence: pre.Generation, etag: true}
	if create {
		exp.rule = genCreated
	}
	return c.mutate(ctx, KeyApply, http.MethodPut, "", req, pre, create, exp)
}

// Import adopts a native resource (route 7, POST …/{name}/import; spec/host-api-v1alpha3.md
// §3.4 (7)). With pre.Generation empty it is a new adoption (If-None-Match:
// *); otherwise it is fenced by Takoform-Expected-Generation and pre.UID is
// bound into the key. req.NativeID is required (1..4096 characters). A new
// adoption answers 201 (generation 1), a fenced one 200; either may answer
// 202.
func (c *Client) Import(ctx context.Context, req wire.ImportRequest, pre Precondition) (*Mutation, error) {
	a, err := checkCore("import", req.APIVersion, req.Kind, req.Form, req.Metadata, req.Spec)
	if err != nil {
		return nil, err
	}
	create, err := pre.fence("import", true, false)
	if err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(req.NativeID); n < 1 || n > 4096 {
		return nil, fmt.Errorf("takoform: import: nativeId has %d characters; want 1..4096", n)
	}
	exp := expectation{addr: a, rule: genAdvanced, fence: pre.Generation, etag: true}
	if create {
		exp.rule = genCreated
	}
	return c.mutate(ctx, KeyImport, http.MethodPost, "/import", req, pre, create, exp)
}

// mutate sends apply or import and reads the answer.
func (c *Client) mutate(ctx context.Context, op, method, suffix string, req any, pre Precondition, create bool, exp expectation) (*Mutation, error) {
	a := exp.addr
	path, err := c.resourcePath(a.Ref, a.Name, suffix)
	if err != nil {
		return nil, fmt.Errorf("takoform: %s: %w", op, err)
	}
	body, err := encodeBody(op, req)
	if err != nil {
		return nil, err
	}
	r := jsonRequest(op, method, path, body)
	r.mutation = true
	r.key = c.scoped(ctx, IdempotencyKey(op, a.Ref.APIVersion, a.Ref.Kind, a.Name, a.Space, pre.UID, pre.Generation, body))
	if create {
		r.header.Set("If-None-Match", "*")
	} else {
		r.header.Set(wire.HeaderGeneration, pre.Generation)
	}
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	sync := http.StatusOK
	if create {
		sync = http.StatusCreated
	}
	if err := c.expectStatus(r, resp, sync, http.StatusAccepted); err != nil {
		return nil, err
	}
	if resp.status == http.StatusAccepted {
		return c.accepted(r, resp, exp)
	}
	var res wire.Resource
	if err := c.decodeAnswer(r, resp, &res, "resource"); err != nil {
		return nil, err
	}
	if err := c.verify(r, resp, &res, exp); err != nil {
		return nil, err
	}
	return &Mutation{Status: resp.status, Resource: &res, ETag: resp.header.Get("ETag"), IdempotencyKey: r.key, exp: exp}, nil
}

// verify checks a resource answer against exp (spec/host-api-v1alpha3.md §5.1).
func (c *Client) verify(r *request, resp *response, res *wire.Resource, exp expectation) error {
	err := checkResource(res, exp.addr, exp.uid)
	if err == nil {
		err = checkGeneration(res.Metadata.Generation, exp.fence, exp.rule)
	}
	if err == nil && resp != nil {
		err = checkETag(resp.header, res.Metadata.Revision, exp.etag)
	}
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.status
		}
		return c.protocolError(r, status, "the resource answer is not the one asked for", err)
	}
	return nil
}

// Read fetches a resource under its exact recorded FormRef (route 6, GET
// …/{name} with the exact query; spec/host-api-v1alpha3.md §3.4 (6)). The answer is verified
// (VerifyResource) and its ETag must be the quoted revision. Absence is
// only a *wire.Error with IsNotFound true.
func (c *Client) Read(ctx context.Context, a Address) (*wire.Resource, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("takoform: read: %w", err)
	}
	path, err := c.resourcePath(a.Ref, a.Name, "")
	if err != nil {
		return nil, fmt.Errorf("takoform: read: %w", err)
	}
	r := &request{op: "read", method: http.MethodGet, path: path, query: exactQuery(a.Space, a.Ref)}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var res wire.Resource
	if err := c.decodeAnswer(r, resp, &res, "resource"); err != nil {
		return nil, err
	}
	if err := c.verify(r, resp, &res, expectation{addr: a, rule: genAny, etag: true}); err != nil {
		return nil, err
	}
	return &res, nil
}

// Observe re-observes a resource without changing its desired state
// (route 8, POST …/{name}/observe with the exact query, empty body;
// spec/host-api-v1alpha3.md §3.4 (8)). pre.Generation and pre.UID are required; the answer's
// generation must equal the fence; an ETag, when sent, must be the quoted
// revision. The Idempotency-Key is IdempotencyKey(KeyObserve, …, no body).
func (c *Client) Observe(ctx context.Context, a Address, pre Precondition) (*wire.Resource, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("takoform: observe: %w", err)
	}
	if _, err := pre.fence("observe", false, false); err != nil {
		return nil, err
	}
	path, err := c.resourcePath(a.Ref, a.Name, "/observe")
	if err != nil {
		return nil, fmt.Errorf("takoform: observe: %w", err)
	}
	r := &request{op: "observe", method: http.MethodPost, path: path, query: exactQuery(a.Space, a.Ref), header: http.Header{}}
	r.key = c.scoped(ctx, IdempotencyKey(KeyObserve, a.Ref.APIVersion, a.Ref.Kind, a.Name, a.Space, pre.UID, pre.Generation, nil))
	r.header.Set(wire.HeaderGeneration, pre.Generation)
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var env wire.ResourceEnvelope
	if err := c.decodeAnswer(r, resp, &env, "resource envelope", "/resource"); err != nil {
		return nil, err
	}
	if err := c.verify(r, resp, &env.Resource, expectation{addr: a, rule: genEqual, fence: pre.Generation}); err != nil {
		return nil, err
	}
	return &env.Resource, nil
}

// Delete deletes a resource (route 9, DELETE …/{name} with the exact
// query, empty body; spec/host-api-v1alpha3.md §3.4 (9)). pre.Generation and pre.UID are
// required; pre.Revision, when set, is sent as If-Match. The answer is 204
// (Mutation with neither Resource nor Operation) or 202. The
// Idempotency-Key is IdempotencyKey(KeyDelete, …, no body).
func (c *Client) Delete(ctx context.Context, a Address, pre Precondition) (*Mutation, error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("takoform: delete: %w", err)
	}
	if _, err := pre.fence("delete", false, true); err != nil {
		return nil, err
	}
	path, err := c.resourcePath(a.Ref, a.Name, "")
	if err != nil {
		return nil, fmt.Errorf("takoform: delete: %w", err)
	}
	r := &request{op: "delete", method: http.MethodDelete, path: path, query: exactQuery(a.Space, a.Ref), header: http.Header{}, mutation: true}
	r.key = c.scoped(ctx, IdempotencyKey(KeyDelete, a.Ref.APIVersion, a.Ref.Kind, a.Name, a.Space, pre.UID, pre.Generation, nil))
	r.header.Set(wire.HeaderGeneration, pre.Generation)
	if pre.Revision != "" {
		r.header.Set("If-Match", `"`+pre.Revision+`"`)
	}
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := c.expectStatus(r, resp, http.StatusNoContent, http.StatusAccepted); err != nil {
		return nil, err
	}
	if resp.status == http.StatusAccepted {
		return c.accepted(r, resp, expectation{addr: a})
	}
	if err := c.expectEmpty(r, resp); err != nil {
		return nil, err
	}
	return &Mutation{Status: resp.status, IdempotencyKey: r.key}, nil
}
