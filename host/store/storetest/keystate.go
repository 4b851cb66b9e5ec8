package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// KeyState answers what Idempotency, Resource, PendingOperationFor and
// PinsToName answer, in a View and in an Update, including the Update's
// own writes before it.
func testKeyState(t *testing.T, s store.Store) {
	kv1, w1 := kv("acme", "prod", "kv1", "uid-1"), kv("acme", "prod", "w1", "uid-3")
	create(t, s, kv1, w1)
	pins := []store.Pin{pin("uid-3", "/kvBindings/0/resource", kv1)}
	pending := op("op_2", kv1.Key, at(0), at(time.Minute))
	rec := idem("alice", "prod", "takoform-abc", at(0))
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ReplacePins", tx.ReplacePins("uid-3", pins))
		wantNoErr(t, "PutOperation", tx.PutOperation(pending))
		return tx.ClaimIdempotency(rec)
	})
	recorded := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-abc"}
	unused := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-new"}
	check := func(tx store.Tx, in string) {
		st, err := tx.KeyState(kv1.Key, recorded)
		wantNoErr(t, in+": KeyState", err)
		equal(t, in+": replay record", st.Replay, rec)
		equal(t, in+": resource", st.Resource, kv1)
		equal(t, in+": pending operation", st.Pending, pending)
		equal(t, in+": pins naming kv1", st.PinsTo, pins)
		st, err = tx.KeyState(w1.Key, unused)
		wantNoErr(t, in+": KeyState", err)
		equal(t, in+": unused key's record", st.Replay, (*store.Idempotency)(nil))
		equal(t, in+": w1", st.Resource, w1)
		equal(t, in+": w1's pending operation", st.Pending, (*store.Operation)(nil))
		equal(t, in+": pins naming w1", len(st.PinsTo), 0)
		st, err = tx.KeyState(key("acme", "staging", "kv1"), nil)
		wantNoErr(t, in+": KeyState of a free key", err)
		equal(t, in+": free key", *st, store.KeyState{})
	}
	view(t, s, func(tx store.Tx) error { check(tx, "View"); return nil })
	update(t, s, func(tx store.Tx) error { check(tx, "Update"); return nil })

	kv2 := kv("acme", "prod", "kv2", "uid-2")
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "CreateResource", tx.CreateResource(kv2))
		wantNoErr(t, "ClaimIdempotency", tx.ClaimIdempotency(idem("alice", "prod", "takoform-new", at(0))))
		st, err := tx.KeyState(kv2.Key, unused)
		wantNoErr(t, "KeyState after the Update's own writes", err)
		equal(t, "the Update's own resource", st.Resource, kv2)
		equal(t, "the Update's own record", st.Replay, idem("alice", "prod", "takoform-new", at(0)))
		return nil
	})
}

// An Update that finds no record through KeyState claims the key without
// conflict: of callers racing with one key, one finds it free and claims
// it, every other finds its record.
func testKeyStateClaimsOnce(t *testing.T, s store.Store) {
	const callers = 16
	k := key("acme", "prod", "kv1")
	replay := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "once"}
	var wg sync.WaitGroup
	start := make(chan struct{})
	claimed := make([]bool, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(context.Background(), func(tx store.Tx) error {
				claimed[i] = false
				st, err := tx.KeyState(k, replay)
				if err != nil || st.Replay != nil {
					return err
				}
				claimed[i] = true
				return tx.ClaimIdempotency(idem("alice", "prod", "once", at(time.Duration(i)*time.Second)))
			})
		})
	}
	close(start)
	wg.Wait()
	n := 0
	for i := range callers {
		wantNoErr(t, "Update", errs[i])
		if claimed[i] {
			n++
		}
	}
	equal(t, "callers that found the key free", n, 1)
}

// A create at a key read absent whose UID is taken fails its Update with
// ErrConflict — from CreateResource, or, where the store sends the insert
// with the commit, from Update — and nothing of the Update is written.
func testKeyStateCreateConflict(t *testing.T, s store.Store) {
	create(t, s, kv("acme", "prod", "kv1", "uid-1"))
	taken := kv("acme", "prod", "kv2", "uid-1")
	replay := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-abc"}
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.KeyState(taken.Key, replay); err != nil {
			return err
		}
		if err := tx.CreateResource(taken); err != nil {
			return err
		}
		return tx.ClaimIdempotency(idem("alice", "prod", "takoform-abc", at(0)))
	})
	wantErr(t, "Update creating a taken UID", err, store.ErrConflict)
	view(t, s, func(tx store.Tx) error {
		st, err := tx.KeyState(taken.Key, replay)
		wantNoErr(t, "KeyState", err)
		equal(t, "the failed Update's resource", st.Resource, (*store.Resource)(nil))
		equal(t, "the failed Update's record", st.Replay, (*store.Idempotency)(nil))
		return nil
	})
}

// KeyState returns every pin naming the key, from several sources and
// several of one source, ordered as PinsToName: by source UID, then the
// source's pin order; the key's other parts are read beside them.
func testKeyStatePins(t *testing.T, s store.Store) {
	kv1 := kv("acme", "prod", "kv1", "uid-1")
	w1, w2 := kv("acme", "prod", "w1", "uid-5"), kv("acme", "prod", "w2", "uid-3")
	create(t, s, kv1, w1, w2)
	rec := idem("alice", "prod", "takoform-abc", at(0))
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ReplacePins of w1", tx.ReplacePins("uid-5", []store.Pin{pin("uid-5", "/kvBindings/0/resource", kv1)}))
		wantNoErr(t, "ReplacePins of w2", tx.ReplacePins("uid-3", []store.Pin{
			pin("uid-3", "/kvBindings/1/resource", kv1), pin("uid-3", "/kvBindings/0/resource", kv1),
		}))
		return tx.ClaimIdempotency(rec)
	})
	want := []store.Pin{
		pin("uid-3", "/kvBindings/1/resource", kv1), pin("uid-3", "/kvBindings/0/resource", kv1),
		pin("uid-5", "/kvBindings/0/resource", kv1),
	}
	replay := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-abc"}
	check := func(tx store.Tx, in string) {
		st, err := tx.KeyState(kv1.Key, replay)
		wantNoErr(t, in+": KeyState", err)
		equal(t, in+": pins naming kv1", st.PinsTo, want)
		byName, err := tx.PinsToName("acme", "prod", kv1.APIVersion, kv1.Kind, "kv1")
		wantNoErr(t, in+": PinsToName", err)
		equal(t, in+": PinsToName", st.PinsTo, byName)
		equal(t, in+": replay record", st.Replay, rec)
		equal(t, in+": resource", st.Resource, kv1)
		equal(t, in+": pending operation", st.Pending, (*store.Operation)(nil))
	}
	view(t, s, func(tx store.Tx) error { check(tx, "View"); return nil })
	update(t, s, func(tx store.Tx) error { check(tx, "Update"); return nil })
}
