package conformance

import (
	"context"
	"fmt"
	"net/http"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "async-commit-revalidates", Group: "operations", Summary: "an accepted create whose relation target vanished before commit ends in an operation error and commits nothing", Run: asyncCommitRevalidates},
		Check{ID: "async-commit-binds-the-accepted-identity", Group: "operations", Summary: "an accepted update commits only to the incarnation it was accepted for: uid_mismatch or resource_not_found otherwise", Run: asyncCommitBindsIdentity},
		Check{ID: "operation-bound-to-its-creating-principal", Group: "operations", Summary: "another principal or tenant reading or cancelling an operation gets operation_not_found", Run: operationBoundToPrincipal},
	)
}

// rxOperationFailed checks a terminal operation failed with code.
func rxOperationFailed(op *wire.Operation, code wire.Code) error {
	if op.Error == nil {
		return fmt.Errorf("operation %s succeeded (%s); want error %s", op.ID, abbreviate(op.Result), code)
	}
	if op.Error.Code != code || op.Error.Retryable {
		return fmt.Errorf("operation %s failed %s (retryable %v): %s; want %s, not retryable", op.ID, op.Error.Code, op.Error.Retryable, op.Error.Message, code)
	}
	return nil
}

func asyncCommitRevalidates(ctx context.Context, e *Env) error {
	kvRef, _, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	vref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	kv, err := rxCreateAs(ctx, e, e.A1, kvRef, e.Name("kv"), map[string]any{})
	if err != nil {
		return err
	}
	name := e.Name("version")
	accepted, _, _, err := rxAsyncCreate(ctx, e, vref, name, e.rxVersionSpec(a, kv.Metadata.Name))
	if err != nil {
		return err
	}
	if op, _ := rxAccepted(accepted); op.Done {
		return skipf("the host finished the probe-forced operation before answering")
	}
	// Accepted, not committed: nothing pins the namespace yet.
	if err := rxDelete(ctx, e, e.Creds.A1, kv); err != nil {
		return fmt.Errorf("delete the binding target while the create is pending: %w", err)
	}
	op, _, err := rxPoll(ctx, e, e.Creds.A1, accepted)
	if err != nil {
		return err
	}
	if err := rxOperationFailed(op, wire.ResourceNotFound); err != nil {
		return fmt.Errorf("the commit must re-resolve relations: %w", err)
	}
	return rxAbsent(ctx, e, e.A1, vref, name, "after a commit whose relation target vanished")
}

func asyncCommitBindsIdentity(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	spec := map[string]any{"messageRetentionSeconds": 86400}
	for _, recreate := range []bool{true, false} {
		q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), spec)
		if err != nil {
			return err
		}
		h, err := rxProbeHeaders(e, nil)
		if err != nil {
			return err
		}
		body, err := rxPrepared(ctx, e.A1, e.RequestIn(e.Space, ref, q.Metadata.Name, map[string]any{"messageRetentionSeconds": 3600}), q.Metadata.Generation)
		if err != nil {
			return err
		}
		accepted, err := rxPut(ctx, e, e.Creds.A1, ref, q.Metadata.Name, q.Metadata.Generation, body, h)
		if err != nil {
			return err
		}
		first, err := rxAccepted(accepted)
		if err != nil {
			return fmt.Errorf("a probe-forced async update: %w", err)
		}
		if first.Done {
			return skipf("the host finished the probe-forced operation before answering")
		}
		// The backend loses the queue; the name may come back as a new
		// incarnation at the same generation the update was fenced on.
		if err := rxLoseOutOfBand(ctx, e, q); err != nil {
			return err
		}
		want, what := wire.ResourceNotFound, "the name is free"
		if recreate {
			want, what = wire.UIDMismatch, "the name is held by another incarnation"
			again, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", q.Metadata.Name, spec)
			if err != nil {
				return fmt.Errorf("re-create the queue while the update is pending: %w", err)
			}
			if again.Metadata.UID == q.Metadata.UID || again.Metadata.Generation != q.Metadata.Generation {
				return fmt.Errorf("the re-created queue is uid %s generation %s; want a new uid at generation %s", again.Metadata.UID, again.Metadata.Generation, q.Metadata.Generation)
			}
		}
		op, _, err := rxPoll(ctx, e, e.Creds.A1, accepted)
		if err != nil {
			return err
		}
		if err := rxOperationFailed(op, want); err != nil {
			return fmt.Errorf("an accepted update when %s at commit: %w", what, err)
		}
		if recreate {
			cur, err := e.A1.Read(ctx, Addr(q))
			if err != nil {
				return err
			}
			if cur.Metadata.UID == q.Metadata.UID || cur.Metadata.Generation != "1" {
				return fmt.Errorf("the other incarnation (uid %s) is at generation %s; the update was not accepted for it", cur.Metadata.UID, cur.Metadata.Generation)
			}
		} else if err := rxAbsent(ctx, e, e.A1, ref, q.Metadata.Name, "after an update whose resource vanished"); err != nil {
			return err
		}
	}
	return nil
}

func operationBoundToPrincipal(ctx context.Context, e *Env) error {
	ref, name, accepted, err := rxAsyncWorker(ctx, e)
	if err != nil {
		return err
	}
	first, _ := rxAccepted(accepted)
	unknown := "op_" + randomHex(12)
	for _, who := range []struct{ label, token string }{{"the second principal of the tenant", e.Creds.A2}, {"another tenant", e.Creds.B}} {
		for _, id := range []string{first.ID, unknown} {
			r, err := e.Do(ctx, who.token, http.MethodGet, "/operations/"+id, nil, nil)
			if err != nil {
				return err
			}
			if err := r.ExpectCode(wire.OperationNotFound); err != nil {
				return fmt.Errorf("%s reading operation %s: %w", who.label, id, err)
			}
			c, err := e.Do(ctx, who.token, http.MethodPost, "/operations/"+id+"/cancel", map[string]string{wire.HeaderIdempotency: "cancel-" + randomHex(8)}, nil)
			if err != nil {
				return err
			}
			if err := c.ExpectCode(wire.OperationNotFound); err != nil {
				return fmt.Errorf("%s cancelling operation %s: %w", who.label, id, err)
			}
		}
	}
	// The strangers' cancels changed nothing: it succeeds for its owner.
	op, _, err := rxPoll(ctx, e, e.Creds.A1, accepted)
	if err != nil {
		return err
	}
	if _, err := rxResultResource(op, client.Address{Space: e.Space, Ref: ref, Name: name}, ""); err != nil {
		return fmt.Errorf("after strangers tried to cancel it: %w", err)
	}
	if _, err := e.A2.Operation(ctx, first.ID); ExpectCode(err, wire.OperationNotFound) != nil {
		return fmt.Errorf("the second principal reading the settled operation: %v", err)
	}
	return nil
}
