package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/takoform/takoform/host/lifecycle"
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

// accept records m as an operation the worker commits after delay
// (lifecycle.Engine.Accept, spec/host-api-v1alpha3.md §4) and answers 202
// with the operation; it returns the operation's id.
func (s *Server) accept(tx store.Tx, m *lifecycle.Mutation, st *store.KeyState, now time.Time, delay time.Duration) (answer, string, error) {
	o, err := s.engine.Accept(tx, m, st, now, delay)
	if err != nil {
		return answer{}, "", err
	}
	s.nudge()
	retry := int(math.Ceil(delay.Seconds()))
	if retry < 1 {
		retry = 1
	}
	return answer{status: 202, body: operationEnvelope(o.Operation.Document), retryAfter: retry}, o.Operation.ID, nil
}

// operationEnvelope is the body of a 202: the wire.OperationEnvelope of
// the operation whose stored document is doc, byte for byte json.Marshal's
// (TestOperationEnvelopeIsJSONMarshal).
func operationEnvelope(doc []byte) []byte {
	return append(append([]byte(`{"operation":`), doc...), '}')
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

// settle commits one due operation (lifecycle.Engine.Settle), re-validating
// everything against the store as it is now and binding to the accepted
// incarnation; the terminal document is stored and replayed
// byte-identically from then on.
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
		return s.engine.Settle(tx, op)
	})
	if err == nil && target != nil && s.cfg.Committed != nil {
		s.cfg.Committed(*target)
	}
	return err
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
