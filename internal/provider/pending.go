package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

// Client resumption (spec/host-api-v1alpha3.md §4, decision 0017): an accepted mutation that
// does not settle within its deadline is recorded in state as
// pending_operation_id; the next refresh consults the operation before
// reading the resource.

// pendingOperation returns the id of the operation err says was accepted
// but has not settled, or "".
func pendingOperation(err error) string {
	var ow *client.OperationWaitError
	if errors.As(err, &ow) {
		return ow.ID
	}
	return ""
}

// withPending is next recorded as an accepted, unsettled mutation:
// pending_operation_id is set and every value still unknown is null (no
// representation exists yet).
func withPending(next map[string]any, opID string) map[string]any {
	for k, v := range next {
		next[k] = nullUnknown(v)
	}
	writePending(next, opID)
	return next
}

func nullUnknown(v any) any {
	switch t := v.(type) {
	case unknown:
		return nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = nullUnknown(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = nullUnknown(e)
		}
		return out
	}
	return v
}

// current returns the resource as the host holds it now (spec/host-api-v1alpha3.md §4
// "Client resumption", decision 0017 rules 6–7). A pending operation is
// consulted first: running (or unreadable) → running is true and absence
// means nothing; succeeded → its result, verified against the exact
// identity and the recorded UID; failed (a terminal error, whether read
// once or waited for) or unknown to the host (operation_not_found) → the
// exact read decides, and the UID rule applies: a pending create whose
// operation failed created nothing, so a resource found under its name is
// another incarnation (*strangerError), never bound. With wait, the
// operation is polled until it settles or ctx ends (mutations); without,
// it is read once (refresh never blocks on an operation).
func (r *Resource) current(ctx context.Context, e envelope, wait bool) (res *wire.Resource, running bool, err error) {
	addr := e.address()
	failed := false
	hc, err := r.data.clientFor(ctx, e.Ref)
	if err != nil {
		return nil, false, err
	}
	if id := e.PendingOperation; id != "" {
		var op *wire.Operation
		if wait {
			op, err = hc.WaitOperation(ctx, id)
		} else {
			op, err = hc.Operation(ctx, id)
		}
		var of *client.OperationFailedError
		var we *wire.Error
		switch {
		case errors.As(err, &of), err == nil && op.Done && op.Error != nil:
			failed = true // terminal error: the read below decides
		case errors.As(err, &we) && we.Code == wire.OperationNotFound:
			// expired or unknown: the read below decides
		case err != nil:
			return nil, true, err
		case !op.Done:
			return nil, true, nil
		default:
			res, err := client.ResourceResult(op, addr, e.UID)
			return res, false, err
		}
	}
	res, err = hc.Read(ctx, addr)
	if err == nil && failed && e.UID == "" {
		return nil, false, &strangerError{uid: res.Metadata.UID}
	}
	return res, false, err
}

// strangerError: the accepted create recorded in state failed, yet a
// resource of another incarnation holds its name.
type strangerError struct{ uid string }

func (e *strangerError) Error() string {
	return fmt.Sprintf("the accepted create failed, so nothing was created for this state; the host answers uid %s under the same name", e.uid)
}

// settled waits, under ctx, for the pending operation of state (whose
// envelope is e) to settle and returns the state the host now holds; a
// resource the operation left absent is the host's resource_not_found
// (client.IsNotFound).
func (r *Resource) settled(ctx context.Context, e envelope, state map[string]any, c *Codec) (map[string]any, error) {
	res, running, err := r.current(ctx, e, true)
	if err == nil && running {
		err = errors.New("the operation has not settled")
	}
	if err != nil {
		return nil, err
	}
	next := copyAttrs(state)
	if err := r.decode(c, res, next, state); err != nil {
		return nil, fmt.Errorf("the host's answer cannot be recorded: %w", err)
	}
	return next, nil
}

// settleError renders a pending operation that could not be settled.
func (r *Resource) settleError(err error, e envelope, id identity) diag.Diagnostics {
	id.Operation = e.PendingOperation
	if d := r.strangerDiag(err, id); d != nil {
		return d
	}
	return renderError("An earlier change of "+r.spec.Name+" has not settled", err, withCode(id, CodeOperationPending))
}

// strangerDiag renders a *strangerError as the incarnation error that
// keeps state and names the remedies; nil for any other error.
func (r *Resource) strangerDiag(err error, id identity) diag.Diagnostics {
	var se *strangerError
	if !errors.As(err, &se) {
		return nil
	}
	id.CurrentUID = se.uid
	return renderError("A different incarnation now holds this name", err, withCode(id, CodeUIDMismatch))
}

// pendingWarning says an accepted mutation is still running and was
// recorded to resume.
func (r *Resource) pendingWarning(err error, id identity, op string) diag.Diagnostics {
	id.Operation = op
	return renderWarning("The host accepted the change of "+r.spec.Name+" and is still working on it", err, withCode(id, CodeOperationPending))
}
