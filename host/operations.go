package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// probe returns the test-only Takoform-Conformance-Probe directive, or ""
// when probe mode is off (spec/host-api-v1alpha3.md §3.2).
func (s *Server) probe(r *request) string {
	if !s.cfg.Probe {
		return ""
	}
	return r.Header.Get(wire.HeaderProbe)
}

// accept checks a mutation against the store as it is now and records it
// as an operation the worker commits after delay (spec/host-api-v1alpha3.md §4). It answers
// 202 with the operation.
func (s *Server) accept(tx store.Tx, m *mutation, st *store.KeyState, now time.Time, delay time.Duration) (answer, string, error) {
	if _, err := s.commit(tx, m, st, true, now); err != nil {
		return answer{}, "", err
	}
	if !m.Create && st.Resource != nil {
		m.AcceptedUID = st.Resource.UID
	}
	op := &store.Operation{
		ID: "op_" + randomHex(12), Lane: m.Lane, Tenant: m.Key.Tenant, Principal: m.Principal, Action: m.Action,
		Request: mustJSON(m), TargetUID: m.AcceptedUID, Target: m.Key, NotBefore: now.Add(delay), CreatedAt: now, UpdatedAt: now,
	}
	if m.PollDriven {
		op.NotBefore = pollDrivenNever
	}
	progress := 0
	doc := wire.Operation{APIVersion: wire.OperationsAPI, Kind: wire.OperationKind, ID: op.ID, Metadata: &wire.OperationMetadata{Phase: "Provisioning", Progress: &progress}}
	if m.AcceptedUID != "" {
		doc.Target = &wire.OperationTarget{UID: m.AcceptedUID}
	}
	op.Document = mustJSON(doc)
	if err := tx.PutOperation(op); err != nil {
		return answer{}, "", err
	}
	s.nudge()
	retry := int(math.Ceil(delay.Seconds()))
	if retry < 1 {
		retry = 1
	}
	return answer{status: 202, body: mustJSON(wire.OperationEnvelope{Operation: doc}), retryAfter: retry}, op.ID, nil
}

func (s *Server) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// worker commits due operations until Close.
func (s *Server) worker() {
	defer s.stopped.Done()
	timer := time.NewTimer(workerPoll)
	defer timer.Stop()
	lastExpiry := time.Time{}
	failures := 0 // consecutive failed polls: each waits workerBackoff(failures)
	for {
		wake := s.wake
		if failures > 0 {
			wake = nil // backing off: a nudge does not cut the wait short
		}
		select {
		case <-s.stop:
			return
		case <-timer.C:
		case <-wake:
			timer.Stop()
		}
		if now := s.cfg.Now(); now.Sub(lastExpiry) > time.Minute {
			lastExpiry = now
			if err := s.expireIdempotency(now); err != nil {
				s.log.Error("expire idempotency records", "err", err)
			}
		}
		var due []*store.Operation
		err := s.cfg.Store.View(context.Background(), func(tx store.Tx) error {
			var err error
			due, err = tx.DueOperations(s.cfg.Now(), 32)
			return err
		})
		if err != nil {
			failures++
			wait := workerBackoff(failures)
			s.log.Error("list due operations", "err", err, "failures", failures, "retry_in", wait)
			timer.Reset(wait)
			continue
		}
		failures = 0
		timer.Reset(workerPoll)
		for _, op := range due {
			if err := s.settle(op.ID); err != nil {
				s.log.Error("settle operation", "operation", op.ID, "err", err)
			}
		}
	}
}

// settle commits one due operation, re-validating everything against the
// store as it is now and binding to the accepted incarnation; the terminal
// document is stored and replayed byte-identically from then on.
func (s *Server) settle(id string) error {
	var target *store.Key
	err := s.cfg.Store.Update(context.Background(), func(tx store.Tx) error {
		op, err := tx.ClaimOperation(id)
		if errors.Is(err, store.ErrLocked) {
			return nil // another replica's worker is committing it
		}
		if err != nil || op.Done {
			return err
		}
		target = &op.Target
		return s.settleIn(tx, op)
	})
	if err == nil && target != nil && s.cfg.Committed != nil {
		s.cfg.Committed(*target)
	}
	return err
}

// settleIn commits the pending operation op inside tx and stores its
// terminal document in op (spec/host-api-v1alpha3.md §4).
func (s *Server) settleIn(tx store.Tx, op *store.Operation) error {
	var m mutation
	if err := json.Unmarshal(op.Request, &m); err != nil {
		return err
	}
	m.OperationID, m.Lane = op.ID, op.Lane
	now := s.cfg.Now()
	var doc wire.Operation
	if err := json.Unmarshal(op.Document, &doc); err != nil {
		return fmt.Errorf("stored operation %s: %w", op.ID, err)
	}
	doc.Done, doc.Metadata = true, nil
	o, err := s.commit(tx, &m, nil, false, now)
	var we *wire.Error
	switch {
	case errors.As(err, &we):
		doc.Error = &wire.OperationError{Code: we.Code, Message: we.Message, Retryable: wire.Taxonomy[we.Code].Retryable, HostCode: we.HostCode}
	case err != nil:
		return err
	case m.Action == store.ActionDelete:
		doc.Result = json.RawMessage(`{"deleted":true}`)
	case m.Action == store.ActionObserve:
		doc.Result = o.ans.body
	default:
		doc.Result = mustJSON(map[string]json.RawMessage{"resource": o.ans.body})
	}
	uid := ""
	if o != nil {
		uid = o.uid
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

// ownedOperation loads an operation the caller (tenant and principal)
// created on the request's lane; anyone else's, and one of another lane
// (spec/lane-v1beta1.md §2.5 rule 4), is answered like an unknown id.
func ownedOperation(tx store.Tx, r *request, id string) (*store.Operation, error) {
	op, err := tx.Operation(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (op.Tenant != r.caller.Tenant || op.Principal != r.caller.Principal || op.Lane != r.lane.Name)) {
		return nil, wire.Errorf(wire.OperationNotFound, "operation %q is unknown, expired, or not yours", id)
	}
	return op, err
}

func operationID(r *request) (string, error) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "op_") || strings.Contains(id, "/") {
		return "", wire.Errorf(wire.OperationNotFound, "operation %q is unknown", id)
	}
	return id, nil
}

// operation answers GET /operations/{id} with the bare Operation.
func (s *Server) operation(r *request) (answer, error) {
	id, err := operationID(r)
	if err != nil {
		return answer{}, err
	}
	var op *store.Operation
	var polled answer
	var pollDriven bool
	err = s.cfg.Store.View(r.Context(), func(tx store.Tx) error {
		op, err = ownedOperation(tx, r, id)
		return err
	})
	if err == nil && !op.Done && s.cfg.Probe {
		err = s.cfg.Store.Update(context.WithoutCancel(r.Context()), func(tx store.Tx) error {
			if op, err = ownedOperation(tx, r, id); err != nil {
				return err
			}
			polled, pollDriven, err = s.pollOperation(tx, op)
			return err
		})
	}
	if err != nil {
		return answer{}, err
	}
	if pollDriven {
		return polled, nil
	}
	a := answer{status: 200, body: op.Document}
	if !op.Done {
		a.retryAfter = 1
	}
	return a, nil
}

// cancelOperation answers POST /operations/{id}/cancel: a pending
// operation stops before its commit; a terminal one replays as it is.
func (s *Server) cancelOperation(r *request) (answer, error) {
	if len(r.body) > 0 {
		return answer{}, wire.Errorf(wire.InvalidArgument, "cancel takes an empty body")
	}
	id, err := operationID(r)
	if err != nil {
		return answer{}, err
	}
	var out answer
	err = s.update(r, func(tx store.Tx) error {
		op, err := ownedOperation(tx, r, id)
		if err != nil {
			return err
		}
		if !op.Done {
			var doc wire.Operation
			if err := json.Unmarshal(op.Document, &doc); err != nil {
				return fmt.Errorf("stored operation %s: %w", op.ID, err)
			}
			doc.Done, doc.Metadata = true, nil
			doc.Error = &wire.OperationError{Code: wire.OperationCancelled, Message: "the operation was cancelled before it committed; nothing was changed"}
			op.Done, op.Document, op.UpdatedAt = true, mustJSON(doc), s.cfg.Now()
			if err := tx.PutOperation(op); err != nil {
				return err
			}
			if err := tx.RebindIdempotency(op.ID, ""); err != nil {
				return err
			}
		}
		out = answer{status: 200, body: op.Document}
		return s.record(tx, r, out, "", "")
	})
	return out, err
}

// expireIdempotency drops replay records older than the configured TTL.
func (s *Server) expireIdempotency(now time.Time) error {
	return s.cfg.Store.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.ExpireIdempotency(now.Add(-s.cfg.IdempotencyTTL))
		return err
	})
}
