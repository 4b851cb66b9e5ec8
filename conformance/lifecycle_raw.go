package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Helpers of the lifecycle and discovery checks for requests a client never
// sends as such: explicit keys and headers, byte-level replay comparisons.

// lcKey is a fresh explicit Idempotency-Key.
func lcKey() string { return "conformance-" + randomHex(8) }

// lcCreateHeaders are the headers of a create-intent apply.
func lcCreateHeaders(key string) map[string]string {
	return map[string]string{wire.HeaderIdempotency: key, "If-None-Match": "*"}
}

// lcUpdateHeaders are the headers of a generation-fenced mutation.
func lcUpdateHeaders(key, generation string) map[string]string {
	return map[string]string{wire.HeaderIdempotency: key, wire.HeaderGeneration: generation}
}

// lcApplyBody turns a prepared request into an apply body carrying digest.
func lcApplyBody(req wire.ResourceRequest, digest string) wire.ApplyRequest {
	return wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: req.Spec, Review: wire.Review{PrepareDigest: digest}}
}

// lcPrepared prepares req as c (fenced on generation when it is not "")
// and returns the apply body the review binds: the echoed spec and digest.
func lcPrepared(ctx context.Context, c *client.Client, req wire.ResourceRequest, generation string) (wire.ApplyRequest, error) {
	p, err := c.Prepare(ctx, req, generation)
	if err != nil {
		return wire.ApplyRequest{}, fmt.Errorf("prepare %s %q: %w", req.Kind, req.Metadata.Name, err)
	}
	body := lcApplyBody(req, p.Review.PrepareDigest)
	body.Spec = p.Resource.Spec
	return body, nil
}

// lcPut sends an apply body as a raw PUT with exactly the given headers.
func (e *Env) lcPut(ctx context.Context, token string, body any, apiVersion, kind, name string, headers map[string]string) (*Raw, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, token, http.MethodPut, "/resources/"+apiVersion+"/"+kind+"/"+name, headers, b)
}

// lcPutApply sends an ApplyRequest as a raw PUT to its own path.
func (e *Env) lcPutApply(ctx context.Context, token string, body wire.ApplyRequest, headers map[string]string) (*Raw, error) {
	return e.lcPut(ctx, token, body, body.APIVersion, body.Kind, body.Metadata.Name, headers)
}

// lcRead reads a resource with a raw GET under its exact address.
func (e *Env) lcRead(ctx context.Context, token string, a client.Address) (*Raw, error) {
	return e.Do(ctx, token, http.MethodGet, ResourcePath(a.Ref, a.Name, "")+ExactQuery(a.Space, a.Ref), nil, nil)
}

// lcResource checks a raw answer has the status and decodes its resource
// strictly (a closed document); the ETag must be the quoted revision.
func (r *Raw) lcResource(status int) (*wire.Resource, error) {
	if r.Status != status {
		return nil, fmt.Errorf("answered HTTP %d, want %d: %s", r.Status, status, abbreviate(r.Body))
	}
	var res wire.Resource
	if err := ijson.Unmarshal(r.Body, &res); err != nil {
		return nil, fmt.Errorf("HTTP %d body is not a closed resource: %v", r.Status, err)
	}
	if want := `"` + res.Metadata.Revision + `"`; r.Header.Get("ETag") != want {
		return nil, fmt.Errorf("HTTP %d ETag %q, want the quoted revision %s", r.Status, r.Header.Get("ETag"), want)
	}
	return &res, nil
}

// lcSettle reads a mutation's raw answer: the resource of a synchronous
// answer with status, or the resource the operation of a 202 settled with
// (waited for by the principal holding token).
func (e *Env) lcSettle(ctx context.Context, token string, r *Raw, status int) (*wire.Resource, error) {
	if r.Status != http.StatusAccepted {
		return r.lcResource(status)
	}
	var env wire.OperationEnvelope
	if err := ijson.Unmarshal(r.Body, &env); err != nil {
		return nil, fmt.Errorf("HTTP 202 body is not an operation envelope: %v", err)
	}
	c := e.A1
	switch token {
	case e.Creds.A2:
		c = e.A2
	case e.Creds.B:
		c = e.B
	}
	op, err := c.WaitOperation(ctx, env.Operation.ID)
	if err != nil {
		return nil, err
	}
	var res wire.ResourceEnvelope
	if err := json.Unmarshal(op.Result, &res); err != nil {
		return nil, fmt.Errorf("operation %s result: %v", op.ID, err)
	}
	return &res.Resource, nil
}

// lcExpect checks a raw answer is the refusal code, naming what was sent.
func lcExpect(r *Raw, err error, code wire.Code, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := r.ExpectCode(code); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// lcUnchanged reads res again and requires the same uid, generation and
// revision: a refused mutation changed nothing.
func (e *Env) lcUnchanged(ctx context.Context, res *wire.Resource, after string) error {
	got, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return fmt.Errorf("read after %s: %w", after, err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation || got.Metadata.Revision != res.Metadata.Revision {
		return fmt.Errorf("after %s the resource moved: uid/generation/revision %s/%s/%s, was %s/%s/%s", after,
			got.Metadata.UID, got.Metadata.Generation, got.Metadata.Revision, res.Metadata.UID, res.Metadata.Generation, res.Metadata.Revision)
	}
	return nil
}

// lcAbsent requires that nothing lives at a.
func (e *Env) lcAbsent(ctx context.Context, a client.Address, after string) error {
	_, err := e.A1.Read(ctx, a)
	if client.IsNotFound(err) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("after %s, %s %q exists", after, a.Ref.Kind, a.Name)
	}
	return fmt.Errorf("read after %s: %w", after, err)
}

// lcQueue is an AtLeastOnceQueue spec with a retention in seconds.
func lcQueue(retention int) map[string]any {
	return map[string]any{"messageRetentionSeconds": retention}
}
