package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// PollDrivenNever is the NotBefore of a probe-forced operation: the
// worker never commits it; the caller's polls do (spec/conformance-probe.md §2).
var PollDrivenNever = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) // within every store's time range (int64 nanoseconds end in 2262)

// Accept checks m against the store as tx sees it now, writing nothing
// of the resource, and records it as an operation the worker commits
// after delay, or, for a poll-driven m, the caller's polls
// (spec/host-api-v1alpha3.md §4). The Outcome carries the operation; its
// Document is the pending wire.Operation. A refusal is a *wire.Error.
func (e *Engine) Accept(tx store.Tx, m *Mutation, st *store.KeyState, now time.Time, delay time.Duration) (*Outcome, error) {
	if _, err := e.commit(tx, m, st, true, now); err != nil {
		return nil, err
	}
	if !m.Create && st.Resource != nil {
		m.AcceptedUID = st.Resource.UID
	}
	op := &store.Operation{
		ID: "op_" + randomHex(12), Lane: m.Lane, Tenant: m.Key.Tenant, Principal: m.Principal, Action: m.Action,
		Request: mustJSON(m), TargetUID: m.AcceptedUID, Target: m.Key, NotBefore: now.Add(delay), CreatedAt: now, UpdatedAt: now,
	}
	if m.PollDriven {
		op.NotBefore = PollDrivenNever
	}
	progress := 0
	doc := wire.Operation{APIVersion: wire.OperationsAPI, Kind: wire.OperationKind, ID: op.ID, Metadata: &wire.OperationMetadata{Phase: "Provisioning", Progress: &progress}}
	if m.AcceptedUID != "" {
		doc.Target = &wire.OperationTarget{UID: m.AcceptedUID}
	}
	op.Document = mustJSON(doc)
	if err := tx.PutOperation(op); err != nil {
		return nil, err
	}
	return &Outcome{Action: m.Action, Operation: op}, nil
}

// Settle commits the pending operation op inside tx, re-validating
// everything against the store as it is now and binding to the accepted
// incarnation, and stores its terminal document in op: the committed
// resource's answer bytes, or the refusal as the operation's error; the
// replay records bound to the operation move to the incarnation it
// reports (spec/host-api-v1alpha3.md §4). An error is the store's; tx must
// then not commit.
func (e *Engine) Settle(tx store.Tx, op *store.Operation) error {
	var m Mutation
	if err := json.Unmarshal(op.Request, &m); err != nil {
		return err
	}
	m.OperationID, m.Lane = op.ID, op.Lane
	now := e.now()
	var doc wire.Operation
	if err := json.Unmarshal(op.Document, &doc); err != nil {
		return fmt.Errorf("stored operation %s: %w", op.ID, err)
	}
	doc.Done, doc.Metadata = true, nil
	o, err := e.commit(tx, &m, nil, false, now)
	var we *wire.Error
	switch {
	case errors.As(err, &we):
		doc.Error = &wire.OperationError{Code: we.Code, Message: we.Message, Retryable: wire.Taxonomy[we.Code].Retryable, HostCode: we.HostCode}
	case err != nil:
		return err
	case m.Action == store.ActionDelete:
		doc.Result = json.RawMessage(`{"deleted":true}`)
	case m.Action == store.ActionObserve:
		doc.Result = ObserveBody(o.Resource)
	default:
		doc.Result = mustJSON(map[string]json.RawMessage{"resource": AnswerBytes(o.Resource)})
	}
	uid := ""
	if o != nil {
		uid = o.UID
	}
	if uid != "" {
		doc.Target = &wire.OperationTarget{UID: uid}
	}
	op.Done, op.TargetUID, op.UpdatedAt, op.Document = true, uid, now, mustJSON(doc)
	if err := tx.PutOperation(op); err != nil {
		return err
	}
	return tx.RebindIdempotency(op.ID, uid)
}

// ObserveBody is the body of an observe's answer and of its operation's
// result: {"resource": the answer of res} (spec/host-api-v1alpha3.md §3.4 (8)).
func ObserveBody(res *store.Resource) []byte {
	return append(append([]byte(`{"resource":`), AnswerBytes(res)...), '}')
}

// Poll advances a probe-forced (poll-driven) operation by one poll inside
// tx: the first poll records itself and leaves op pending; the next one
// settles it (Settle) (spec/conformance-probe.md §2). ok is false when op
// is done or not poll-driven (nothing was done); settled is true when this
// poll settled op, whose Document is then terminal.
func (e *Engine) Poll(tx store.Tx, op *store.Operation) (ok, settled bool, err error) {
	var m Mutation
	if err := json.Unmarshal(op.Request, &m); err != nil {
		return false, false, err
	}
	if op.Done || !m.PollDriven {
		return false, false, nil
	}
	if m.Polls == 0 {
		m.Polls++
		op.Request, op.UpdatedAt = mustJSON(m), e.now()
		return true, false, tx.PutOperation(op)
	}
	if err := e.Settle(tx, op); err != nil {
		return true, false, err
	}
	return true, true, nil
}
