package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/cenkalti/backoff/v5"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

var phasePattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,63}$`)

// accepted reads a 202 {"operation": …} answer (spec/host-api-v1alpha3.md §4).
func (c *Client) accepted(r *request, resp *response, exp expectation) (*Mutation, error) {
	var env wire.OperationEnvelope
	if err := c.decodeAnswer(r, resp, &env, "operation envelope", "/operation", "/operation/done"); err != nil {
		return nil, err
	}
	if err := checkOperation(&env.Operation, resp.body, "/operation", ""); err != nil {
		return nil, c.protocolError(r, resp.status, "the accepted operation is invalid", err)
	}
	return &Mutation{Status: resp.status, Operation: &env.Operation, IdempotencyKey: r.key, retryAfter: resp.header.Get("Retry-After"), exp: exp}, nil
}

// checkOperation checks an Operation (operations.takoform.com/v1alpha1,
// spec/host-api-v1alpha3.md §4): identity, id grammar (and equality with wantID when set),
// target and metadata grammars, and the done/result/error states. body
// and at locate the operation in the answer for presence checks.
func checkOperation(op *wire.Operation, body []byte, at, wantID string) error {
	switch {
	case op.APIVersion != wire.OperationsAPI || op.Kind != wire.OperationKind:
		return fmt.Errorf("apiVersion %q kind %q; want %q %q", op.APIVersion, op.Kind, wire.OperationsAPI, wire.OperationKind)
	case !operationPattern.MatchString(op.ID):
		return fmt.Errorf("id %q is not an operation id", op.ID)
	case wantID != "" && op.ID != wantID:
		return fmt.Errorf("id %q is not the operation %q asked for", op.ID, wantID)
	}
	if t := op.Target; t != nil {
		if (t.UID != "" && !wire.ValidUID(t.UID)) || (t.ManifestDigest != "" && !ijson.ValidDigest(t.ManifestDigest)) {
			return errors.New("target.uid or target.manifestDigest breaks its grammar")
		}
	}
	if m := op.Metadata; m != nil {
		if (m.Phase != "" && !phasePattern.MatchString(m.Phase)) || (m.Progress != nil && (*m.Progress < 0 || *m.Progress > 100)) {
			return errors.New("metadata.phase is not PascalCase or metadata.progress is outside 0..100")
		}
	}
	hasResult := len(op.Result) > 0
	switch {
	case !op.Done && (hasResult || op.Error != nil):
		return errors.New("a pending operation (done:false) carries a result or an error")
	case op.Done && hasResult == (op.Error != nil):
		return errors.New("a settled operation (done:true) carries not exactly one of result and error")
	case hasResult && !isObject(op.Result):
		return errors.New("result is not an object")
	case op.Error != nil:
		e := op.Error
		info, known := wire.Taxonomy[e.Code]
		tree, _ := ijson.Decode(body)
		switch {
		case !known:
			return fmt.Errorf("error.code %q is not in the closed taxonomy", e.Code)
		case e.Message == "":
			return errors.New("error.message is empty")
		case e.Retryable && !info.Retryable:
			return fmt.Errorf("error.code %s is marked retryable", e.Code)
		case len(missingMembers(tree, at+"/error/retryable")) > 0:
			return errors.New("error.retryable is absent")
		}
	}
	return nil
}

// Operation reads an operation (route 10, GET {api}/operations/{id};
// spec/host-api-v1alpha3.md §4). Only the creating tenant and principal can read it; everyone
// else gets operation_not_found.
func (c *Client) Operation(ctx context.Context, id string) (*wire.Operation, error) {
	op, _, err := c.getOperation(ctx, id)
	return op, err
}

func (c *Client) getOperation(ctx context.Context, id string) (*wire.Operation, http.Header, error) {
	path, err := c.operationPath(id, "")
	if err != nil {
		return nil, nil, err
	}
	r := &request{op: "operation", method: http.MethodGet, path: path}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	op, err := c.bareOperation(r, resp, id)
	if err != nil {
		return nil, nil, err
	}
	return op, resp.header, nil
}

func (c *Client) operationPath(id, suffix string) (string, error) {
	if !operationPattern.MatchString(id) {
		return "", fmt.Errorf("takoform: %q is not an operation id (op_…)", id)
	}
	p, err := c.apiPath("/operations", [2]string{"operation id", id})
	return p + suffix, err
}

func (c *Client) bareOperation(r *request, resp *response, id string) (*wire.Operation, error) {
	var op wire.Operation
	if err := c.decodeAnswer(r, resp, &op, "operation", "/done"); err != nil {
		return nil, err
	}
	if err := checkOperation(&op, resp.body, "", id); err != nil {
		return nil, c.protocolError(r, resp.status, "the operation is invalid", err)
	}
	return &op, nil
}

// CancelOperation asks the host to cancel an operation (route 11, POST
// {api}/operations/{id}/cancel, Idempotency-Key DeriveKey(KeyCancel, id);
// spec/host-api-v1alpha3.md §4). It answers the bare operation; a settled one replays its
// terminal state.
func (c *Client) CancelOperation(ctx context.Context, id string) (*wire.Operation, error) {
	path, err := c.operationPath(id, "/cancel")
	if err != nil {
		return nil, err
	}
	r := &request{op: "operation-cancel", method: http.MethodPost, path: path, mutation: true, key: DeriveKey(KeyCancel, id)}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	return c.bareOperation(r, resp, id)
}

// WaitOperation polls an operation until it settles (spec/host-api-v1alpha3.md §4): at once,
// then after each answer's Retry-After or the PollPolicy's full-jitter
// backoff. A wait that cannot fit before ctx's deadline is not started.
// It returns the settled operation; a failed or cancelled one also returns
// *OperationFailedError. Stopping before settlement returns
// *OperationWaitError carrying the id to resume with.
func (c *Client) WaitOperation(ctx context.Context, id string) (*wire.Operation, error) {
	if !operationPattern.MatchString(id) {
		return nil, fmt.Errorf("takoform: %q is not an operation id (op_…)", id)
	}
	return c.wait(ctx, id, nil, "")
}

func (c *Client) wait(ctx context.Context, id string, last *wire.Operation, retryAfter string) (*wire.Operation, error) {
	w := &waits{ctx: ctx, delay: c.poll.delay, jitter: c.jitter, retryAfter: retryAfter}
	known := last != nil // the answer that started the wait is the first poll's
	var failed error
	op, ok := repeat(ctx, w, 0, func() (*wire.Operation, error) {
		if !known {
			op, hdr, err := c.getOperation(ctx, id)
			if err != nil {
				failed = err
				return nil, backoff.Permanent(err)
			}
			last, w.retryAfter = op, hdr.Get("Retry-After")
		}
		known = false
		if !last.Done {
			return nil, errPending
		}
		return last, nil
	})
	if !ok {
		return nil, &OperationWaitError{ID: id, Last: last, Err: cmp.Or(failed, w.stopped, ctx.Err(), errPending)}
	}
	return settled(op)
}

// errPending is a poll that found the operation not done yet.
var errPending = errors.New("the operation is still pending")

func settled(op *wire.Operation) (*wire.Operation, error) {
	if op.Error != nil {
		return op, &OperationFailedError{Operation: op, Err: &wire.Error{Code: op.Error.Code, Message: op.Error.Message, HostCode: op.Error.HostCode}}
	}
	return op, nil
}

// ResourceResult decodes the resource of a succeeded apply or import
// operation ({"resource": …}) and verifies it against a and expectedUID
// (VerifyResource). Use it when resuming a persisted operation id.
func ResourceResult(op *wire.Operation, a Address, expectedUID string) (*wire.Resource, error) {
	return resourceResult(op, expectation{addr: a, uid: expectedUID, rule: genAny})
}

func resourceResult(op *wire.Operation, exp expectation) (*wire.Resource, error) {
	bad := func(err error) error {
		return &ProtocolError{Op: "operation " + op.ID, Reason: "the operation result is not the resource asked for", Err: err}
	}
	if !op.Done || op.Error != nil {
		return nil, bad(errors.New("the operation has not succeeded"))
	}
	var env wire.ResourceEnvelope
	if err := decodeStrict(op.Result, &env, "/resource"); err != nil {
		return nil, bad(err)
	}
	err := checkResource(&env.Resource, exp.addr, exp.uid)
	if err == nil {
		err = checkGeneration(env.Resource.Metadata.Generation, exp.fence, exp.rule)
	}
	if err != nil {
		return nil, bad(err)
	}
	return &env.Resource, nil
}

// settle finishes a mutation: the synchronous resource, or the verified
// result of its operation once it settles.
func (c *Client) settle(ctx context.Context, m *Mutation) (*wire.Resource, error) {
	if !m.Accepted() {
		return m.Resource, nil
	}
	op, err := c.wait(ctx, m.Operation.ID, m.Operation, m.retryAfter)
	if err != nil {
		return nil, err
	}
	return resourceResult(op, m.exp)
}

// ApplyAndWait is Apply followed, on 202, by WaitOperation; it returns the
// verified resource. Errors are those of Apply and WaitOperation, or a
// *ProtocolError for a result that is not the resource asked for.
func (c *Client) ApplyAndWait(ctx context.Context, req wire.ApplyRequest, pre Precondition) (*wire.Resource, error) {
	m, err := c.Apply(ctx, req, pre)
	if err != nil {
		return nil, err
	}
	return c.settle(ctx, m)
}

// ImportAndWait is Import followed, on 202, by WaitOperation; it returns
// the verified resource.
func (c *Client) ImportAndWait(ctx context.Context, req wire.ImportRequest, pre Precondition) (*wire.Resource, error) {
	m, err := c.Import(ctx, req, pre)
	if err != nil {
		return nil, err
	}
	return c.settle(ctx, m)
}

// DeleteAndWait is Delete followed, on 202, by WaitOperation. A delete
// operation's result shape is unspecified (spec/host-api-v1alpha3.md §12.4); only success
// matters.
func (c *Client) DeleteAndWait(ctx context.Context, a Address, pre Precondition) error {
	m, err := c.Delete(ctx, a, pre)
	if err != nil || !m.Accepted() {
		return err
	}
	_, err = c.wait(ctx, m.Operation.ID, m.Operation, m.retryAfter)
	return err
}
