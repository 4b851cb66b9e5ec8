package storetest

import (
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Lanes are part of the keys and records the host binds to one lane
// (spec/lane-v1beta1.md §2.5 rules 4–5, repo decision 0053): the same
// Idempotency-Key of one tenant, principal and space claims two records
// on two lanes, a replay read under one lane never finds the other's,
// and operations and uploads keep the lane they were written with
// through every read.
func testLanes(t *testing.T, s store.Store) {
	a := idem("alice", "prod", "takoform-lane", at(0))
	b := idem("alice", "prod", "takoform-lane", at(time.Minute))
	b.Lane, b.Status, b.Body = laneB, 409, []byte(`{"error":{}}`)
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ClaimIdempotency on lane A", tx.ClaimIdempotency(a))
		wantNoErr(t, "ClaimIdempotency of the same key on lane B", tx.ClaimIdempotency(b))
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		again := *b
		wantErr(t, "ClaimIdempotency of lane B's committed key", tx.ClaimIdempotency(&again), store.ErrConflict)
		return nil
	})
	k := key("acme", "prod", "lane-target")
	for _, want := range []*store.Idempotency{a, b} {
		replay := &store.IdempotencyKey{Lane: want.Lane, Tenant: want.Tenant, Principal: want.Principal, Space: want.Space, Key: want.Key}
		update(t, s, func(tx store.Tx) error {
			st, err := tx.KeyState(k, replay)
			wantNoErr(t, "KeyState", err)
			equal(t, "KeyState replay on lane "+want.Lane, st.Replay, want)
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Idempotency(want.Lane, want.Tenant, want.Principal, want.Space, want.Key)
			wantNoErr(t, "Idempotency", err)
			equal(t, "record on lane "+want.Lane, got, want)
			return nil
		})
	}
	update(t, s, func(tx store.Tx) error {
		st, err := tx.KeyState(k, &store.IdempotencyKey{Lane: "forms.takoform.com/v9", Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-lane"})
		wantNoErr(t, "KeyState", err)
		if st.Replay != nil {
			t.Errorf("a replay read on a third lane found %+v", st.Replay)
		}
		return nil
	})

	o := op("op_lane", k, at(0), at(0))
	o.Lane = laneB
	update(t, s, func(tx store.Tx) error { return tx.PutOperation(o) })
	update(t, s, func(tx store.Tx) error {
		got, err := tx.Operation("op_lane")
		wantNoErr(t, "Operation", err)
		equal(t, "operation of lane B", got, o)
		got, err = tx.ClaimOperation("op_lane")
		wantNoErr(t, "ClaimOperation", err)
		equal(t, "claimed operation of lane B", got, o)
		pending, err := tx.PendingOperationFor(k)
		wantNoErr(t, "PendingOperationFor", err)
		if pending.Lane != laneB {
			t.Errorf("PendingOperationFor: lane %q, want %q", pending.Lane, laneB)
		}
		st, err := tx.KeyState(k, nil)
		wantNoErr(t, "KeyState", err)
		if st.Pending == nil || st.Pending.Lane != laneB {
			t.Errorf("KeyState's pending operation %+v, want lane %q", st.Pending, laneB)
		}
		due, err := tx.DueOperations(at(time.Hour), 10)
		wantNoErr(t, "DueOperations", err)
		if len(due) != 1 || due[0].Lane != laneB {
			t.Errorf("DueOperations: %+v, want op_lane of lane %q", due, laneB)
		}
		return nil
	})

	up := &store.Upload{ID: "up_lane", Lane: laneB, Tenant: "acme", Principal: "alice", Manifest: []byte(`{}`), ManifestDigest: "sha256:" + hex64('7'), CreatedAt: at(0)}
	update(t, s, func(tx store.Tx) error { return tx.PutUpload(up) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Upload("up_lane")
		wantNoErr(t, "Upload", err)
		equal(t, "upload of lane B", got, up)
		return nil
	})
}

func hex64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
