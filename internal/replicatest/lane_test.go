package replicatest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// TestNoLostUpdateAcrossReplicas: 64 writers spread over two replicas each
// increment one queue's messageRetentionSeconds once with a fenced
// read-prepare-apply loop (spec/host-api-v1alpha3.md §1.5, §5.4). Every
// acknowledged update must be counted: the final value is the start plus
// the number of acknowledged updates, and every acknowledged generation is
// distinct.
func TestNoLostUpdateAcrossReplicas(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{})
	ctx := context.Background()
	const writers, start = 64, 600
	name := f.proxy.Name("counter")
	q, err := f.proxy.Create(ctx, f.proxy.A1, "AtLeastOnceQueue", name, queueSpec(start))
	if err != nil {
		t.Fatal(err)
	}
	qref, space := q.Form.FormRef, q.Metadata.Space
	var mu sync.Mutex
	acked := map[string]int{} // generation -> writer
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			e := f.replica(w)
			for attempt := 0; ; attempt++ {
				if attempt > 500 {
					errs <- fmt.Errorf("writer %d: no update admitted in 500 attempts", w)
					return
				}
				cur, err := read(ctx, e, space, qref, name)
				if err != nil {
					errs <- fmt.Errorf("writer %d: read: %w", w, err)
					return
				}
				var spec struct {
					Retention int `json:"messageRetentionSeconds"`
				}
				if err := json.Unmarshal(cur.Spec, &spec); err != nil {
					errs <- err
					return
				}
				req := e.RequestIn(space, qref, name, queueSpec(spec.Retention+1))
				// Prepared by the other replica: its digest verifies on this one.
				body, err := prepared(ctx, f.replica(w+1), req, cur)
				if conformance.ExpectCode(err, wire.GenerationConflict) == nil {
					continue
				} else if err != nil {
					errs <- fmt.Errorf("writer %d: prepare: %w", w, err)
					return
				}
				raw, err := putApply(ctx, e, req, body, newKey(), cur.Metadata.Generation, "")
				if err != nil {
					errs <- fmt.Errorf("writer %d: apply: %w", w, err)
					return
				}
				if raw.Status == 412 && refusal(raw) == wire.GenerationConflict {
					continue
				}
				res, err := decodeResource(raw)
				if err != nil || raw.Status != 200 {
					errs <- fmt.Errorf("writer %d: apply answered %d: %s", w, raw.Status, raw.Body)
					return
				}
				mu.Lock()
				if other, dup := acked[res.Metadata.Generation]; dup {
					errs <- fmt.Errorf("generation %s acknowledged to writers %d and %d: a lost update", res.Metadata.Generation, other, w)
				}
				acked[res.Metadata.Generation] = w
				mu.Unlock()
				return
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final, err := read(ctx, f.proxy, space, qref, name)
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Retention int `json:"messageRetentionSeconds"`
	}
	if err := json.Unmarshal(final.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Retention != start+len(acked) || final.Metadata.Generation != fmt.Sprint(1+len(acked)) {
		t.Fatalf("after %d acknowledged increments: value %d (want %d), generation %s (want %d)",
			len(acked), spec.Retention, start+len(acked), final.Metadata.Generation, 1+len(acked))
	}
	if len(acked) != writers {
		t.Fatalf("%d of %d writers acknowledged", len(acked), writers)
	}
}

// TestIdempotentReplayAcrossReplicas: an answer recorded by replica A —
// a 201, a recorded refusal, a 202, a 200 and a 204 — replays from
// replica B with the identical status, ETag and body (spec/host-api-v1alpha3.md §3.5).
func TestIdempotentReplayAcrossReplicas(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{Probe: true})
	ctx := context.Background()
	a, b := f.replica(0), f.replica(1)
	qref := ref(t, a, "AtLeastOnceQueue")
	same := func(what string, first *conformance.Raw, send func(e *conformance.Env) (*conformance.Raw, error)) {
		t.Helper()
		again, err := send(b)
		if err != nil {
			t.Fatal(err)
		}
		if again.Status != first.Status || again.Header.Get("ETag") != first.Header.Get("ETag") || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("%s replayed by replica B differs:\n%d %s %s\nfirst (replica A):\n%d %s %s", what,
				again.Status, again.Header.Get("ETag"), again.Body, first.Status, first.Header.Get("ETag"), first.Body)
		}
	}
	name := a.Name("replay")
	req := a.RequestIn(a.Space, qref, name, queueSpec(3600))
	body, err := prepared(ctx, a, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := newKey()
	created, err := putApply(ctx, a, req, body, key, "", "")
	if err != nil || created.Status != 201 {
		t.Fatalf("create: %v %+v", err, created)
	}
	same("a 201 create", created, func(e *conformance.Env) (*conformance.Raw, error) { return putApply(ctx, e, req, body, key, "", "") })

	refusedKey := newKey()
	refused, err := putApply(ctx, a, req, body, refusedKey, "", "")
	if err != nil || refused.Status != 412 {
		t.Fatalf("create on a taken name: %v %+v", err, refused)
	}
	same("a recorded refusal", refused, func(e *conformance.Env) (*conformance.Raw, error) {
		return putApply(ctx, e, req, body, refusedKey, "", "")
	})

	res, err := decodeResource(created)
	if err != nil {
		t.Fatal(err)
	}
	upd := a.RequestIn(a.Space, qref, name, queueSpec(7200))
	updBody, err := prepared(ctx, a, upd, res)
	if err != nil {
		t.Fatal(err)
	}
	updKey := newKey()
	updated, err := putApply(ctx, a, upd, updBody, updKey, "1", "")
	if err != nil || updated.Status != 200 {
		t.Fatalf("update: %v %+v", err, updated)
	}
	same("a 200 update", updated, func(e *conformance.Env) (*conformance.Raw, error) {
		return putApply(ctx, e, upd, updBody, updKey, "1", "")
	})

	asyncName := a.Name("replay-async")
	areq := a.RequestIn(a.Space, qref, asyncName, queueSpec(3600))
	abody, err := prepared(ctx, a, areq, nil)
	if err != nil {
		t.Fatal(err)
	}
	akey := newKey()
	accepted, err := putApply(ctx, a, areq, abody, akey, "", "async")
	if err != nil || accepted.Status != 202 {
		t.Fatalf("async create: %v %+v", err, accepted)
	}
	asend := func(e *conformance.Env) (*conformance.Raw, error) {
		return putApply(ctx, e, areq, abody, akey, "", "async")
	}
	same("a pending 202", accepted, asend)
	var env wire.OperationEnvelope
	if err := json.Unmarshal(accepted.Body, &env); err != nil {
		t.Fatal(err)
	}
	if op, err := b.A1.WaitOperation(ctx, env.Operation.ID); err != nil || !op.Done || op.Error != nil {
		t.Fatalf("operation accepted by A, polled through B: %v %+v", err, op)
	}
	same("a 202 after its operation committed", accepted, asend)

	delKey := newKey()
	deleted, err := deleteRaw(ctx, a, a.Space, qref, name, "2", delKey)
	if err != nil || deleted.Status != 204 {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	same("a 204 delete", deleted, func(e *conformance.Env) (*conformance.Raw, error) {
		return deleteRaw(ctx, e, a.Space, qref, name, "2", delKey)
	})
}

// together runs fns at the same moment (released by one barrier) and
// waits for all of them.
func together(fns ...func()) {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for _, fn := range fns {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			fn()
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
}

// untilSettled resends a request answered resource_busy (the key is in
// flight on the other replica) until it is answered otherwise.
func untilSettled(send func() (*conformance.Raw, error)) (*conformance.Raw, error) {
	for i := 0; ; i++ {
		raw, err := send()
		if err != nil || refusal(raw) != wire.ResourceBusy || i == 100 {
			return raw, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneKeyAtTwoReplicasExecutesOnce sends one create under one
// idempotency key to replicas A and B at the same moment, many times: the
// request executes once (the record is claimed insert-only), so both end
// with the same answer — never one 201 and one generation_conflict from a
// second execution (spec/host-api-v1alpha3.md §3.5). Odd rounds are
// asynchronous: both see the same 202 and one operation.
func TestOneKeyAtTwoReplicasExecutesOnce(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{Probe: true})
	ctx := context.Background()
	a, b := f.replica(0), f.replica(1)
	qref := ref(t, a, "AtLeastOnceQueue")
	for round := 0; round < 20; round++ {
		probe, want := "", 201
		if round%2 == 1 {
			probe, want = "async", 202
		}
		req := a.RequestIn(a.Space, qref, a.Name("once"), queueSpec(3600))
		body, err := prepared(ctx, a, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		key := newKey()
		answers := make([]*conformance.Raw, 2)
		errs := make([]error, 2)
		together(
			func() {
				answers[0], errs[0] = untilSettled(func() (*conformance.Raw, error) { return putApply(ctx, a, req, body, key, "", probe) })
			},
			func() {
				answers[1], errs[1] = untilSettled(func() (*conformance.Raw, error) { return putApply(ctx, b, req, body, key, "", probe) })
			},
		)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d replica %d: %v", round, i, err)
			}
		}
		if answers[0].Status != want || answers[1].Status != want || !bytes.Equal(answers[0].Body, answers[1].Body) {
			t.Fatalf("round %d: one key at two replicas answered\nA: %d %s\nB: %d %s\nwant one execution answering %d to both",
				round, answers[0].Status, answers[0].Body, answers[1].Status, answers[1].Body, want)
		}
	}
}
