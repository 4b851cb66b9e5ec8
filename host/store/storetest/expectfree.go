package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// KeyStateExpectFree answers the empty state at a free key and an unused
// idempotency key, and a create on it commits; a UID found taken then
// fails the Update with ErrConflict and writes nothing; in a View it
// reads as KeyState.
func testExpectFreeAtFreeKey(t *testing.T, s store.Store) {
	create(t, s, kv("acme", "prod", "kv1", "uid-1"))
	replay := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-abc"}
	kv2, rec := kv("acme", "prod", "kv2", "uid-2"), idem("alice", "prod", "takoform-abc", at(0))
	update(t, s, func(tx store.Tx) error {
		st, err := tx.KeyStateExpectFree(kv2.Key, replay)
		wantNoErr(t, "KeyStateExpectFree of a free key", err)
		equal(t, "the free key's state", *st, store.KeyState{})
		wantNoErr(t, "CreateResource", tx.CreateResource(kv2))
		return tx.ClaimIdempotency(rec)
	})
	view(t, s, func(tx store.Tx) error {
		st, err := tx.KeyStateExpectFree(kv2.Key, replay)
		wantNoErr(t, "KeyStateExpectFree in a View", err)
		equal(t, "the created resource", st.Resource, kv2)
		equal(t, "the claimed record", st.Replay, rec)
		return nil
	})

	taken := kv("acme", "prod", "kv3", "uid-1")
	unused := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: "takoform-new"}
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if _, err := tx.KeyStateExpectFree(taken.Key, unused); err != nil {
			return err
		}
		if err := tx.CreateResource(taken); err != nil {
			return err
		}
		return tx.ClaimIdempotency(idem("alice", "prod", "takoform-new", at(0)))
	})
	wantErr(t, "Update creating a taken UID at a free key", err, store.ErrConflict)
	view(t, s, func(tx store.Tx) error {
		st, err := tx.KeyState(taken.Key, unused)
		wantNoErr(t, "KeyState", err)
		equal(t, "the failed Update's resource", st.Resource, (*store.Resource)(nil))
		equal(t, "the failed Update's record", st.Replay, (*store.Idempotency)(nil))
		return nil
	})
}

// A key that is not free — a resource at it, its idempotency key
// recorded, an operation pending for it, a pin naming it — reaches fn
// as KeyState reads it before the Update ends: fn's last run sees the
// state as it is, and nothing a run wrote on the state taken for granted
// is stored, whether it wrote before deciding (a setting) or only
// pending creates.
func testExpectFreeAtTakenKey(t *testing.T, s store.Store) {
	cases := []struct {
		name  string
		setup func(tx store.Tx, name, idemKey string) error
	}{
		{"resource", func(tx store.Tx, name, _ string) error {
			return tx.CreateResource(kv("acme", "prod", name, "uid-"+name))
		}},
		{"record", func(tx store.Tx, _, idemKey string) error {
			return tx.ClaimIdempotency(idem("alice", "prod", idemKey, at(0)))
		}},
		{"pending operation", func(tx store.Tx, name, _ string) error {
			return tx.PutOperation(op("op-"+name, key("acme", "prod", name), at(0), at(0)))
		}},
		{"pin", func(tx store.Tx, name, _ string) error {
			holder := kv("acme", "prod", "holder-"+name, "uid-holder-"+name)
			if err := tx.CreateResource(holder); err != nil {
				return err
			}
			return tx.ReplacePins(holder.UID, []store.Pin{pin(holder.UID, "/kvBindings/0/resource", kv("acme", "prod", name, "uid-gone"))})
		}},
	}
	for i, c := range cases {
		for _, marker := range []bool{false, true} {
			in := fmt.Sprintf("%s (a setting written first: %v)", c.name, marker)
			name, idemKey, setting := fmt.Sprintf("kv%d-%v", i, marker), fmt.Sprintf("takoform-%d-%v", i, marker), fmt.Sprintf("marker-%d-%v", i, marker)
			k := key("acme", "prod", name)
			replay := &store.IdempotencyKey{Lane: laneA, Tenant: "acme", Principal: "alice", Space: "prod", Key: idemKey}
			update(t, s, func(tx store.Tx) error { return c.setup(tx, name, idemKey) })
			var before store.KeyState
			view(t, s, func(tx store.Tx) error {
				st, err := tx.KeyState(k, replay)
				before = *st
				return err
			})
			var seen store.KeyState
			update(t, s, func(tx store.Tx) error {
				st, err := tx.KeyStateExpectFree(k, replay)
				if err != nil {
					return err
				}
				seen = *st
				if st.Replay != nil || st.Resource != nil || st.Pending != nil || len(st.PinsTo) > 0 {
					return nil
				}
				if marker {
					if _, err := tx.PutSetting(setting, []byte("written on a free key")); err != nil {
						return err
					}
				}
				if err := tx.CreateResource(kv("acme", "prod", name, "uid-new-"+name)); err != nil {
					return err
				}
				return tx.ClaimIdempotency(idem("alice", "prod", idemKey, at(time.Hour)))
			})
			equal(t, in+": the state fn decided on", seen, before)
			view(t, s, func(tx store.Tx) error {
				st, err := tx.KeyState(k, replay)
				wantNoErr(t, in+": KeyState after", err)
				equal(t, in+": the state after", *st, before)
				_, err = tx.Setting(setting)
				wantErr(t, in+": the setting written on the state taken for granted", err, store.ErrNotFound)
				return nil
			})
		}
	}
}

// An error fn returns on a state taken for granted is the Update's only
// when the state was so: at a taken key fn runs again on the state as it
// is, and that run's outcome is the Update's.
func testExpectFreeError(t *testing.T, s store.Store) {
	errFree := errors.New("the key is free")
	decide := func(k store.Key) error {
		return s.Update(context.Background(), func(tx store.Tx) error {
			st, err := tx.KeyStateExpectFree(k, nil)
			if err != nil {
				return err
			}
			if st.Resource == nil {
				return errFree
			}
			return nil
		})
	}
	create(t, s, kv("acme", "prod", "kv1", "uid-1"))
	wantNoErr(t, "Update deciding on a taken key", decide(key("acme", "prod", "kv1")))
	wantErr(t, "Update deciding on a free key", decide(key("acme", "prod", "kv2")), errFree)
}

// Of callers creating one key at the same moment on the state taken for
// granted, exactly one creates it; every other's Update ends without
// error, its last run having seen the winner's resource.
func testExpectFreeConcurrent(t *testing.T, s store.Store) {
	const callers = 16
	k := key("acme", "prod", "kv1")
	var wg sync.WaitGroup
	start := make(chan struct{})
	created := make([]bool, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(context.Background(), func(tx store.Tx) error {
				created[i] = false
				st, err := tx.KeyStateExpectFree(k, nil)
				if err != nil || st.Resource != nil {
					return err
				}
				created[i] = true
				return tx.CreateResource(kv("acme", "prod", "kv1", fmt.Sprintf("uid-%d", i)))
			})
		})
	}
	close(start)
	wg.Wait()
	n, winner := 0, -1
	for i := range callers {
		wantNoErr(t, "Update", errs[i])
		if created[i] {
			n, winner = n+1, i
		}
	}
	equal(t, "callers that created the key", n, 1)
	view(t, s, func(tx store.Tx) error {
		r, err := tx.Resource(k)
		wantNoErr(t, "Resource", err)
		equal(t, "the stored resource's UID", r.UID, fmt.Sprintf("uid-%d", winner))
		return nil
	})
}

// Two keys taken for granted in one transaction are both verified: the
// first taken, the second free, fn's last run sees the first as it is
// and creates nothing on it.
func testExpectFreeTwoKeys(t *testing.T, s store.Store) {
	create(t, s, kv("acme", "prod", "kv1", "uid-1"))
	var seen store.KeyState
	update(t, s, func(tx store.Tx) error {
		first, err := tx.KeyStateExpectFree(key("acme", "prod", "kv1"), nil)
		if err != nil {
			return err
		}
		second, err := tx.KeyStateExpectFree(key("acme", "prod", "kv2"), nil)
		if err != nil {
			return err
		}
		seen = *first
		if first.Resource != nil || second.Resource != nil {
			return nil
		}
		if err := tx.CreateResource(kv("acme", "prod", "kv1", "uid-new-1")); err != nil {
			return err
		}
		return tx.CreateResource(kv("acme", "prod", "kv2", "uid-new-2"))
	})
	equal(t, "the taken key's UID fn decided on", seen.Resource != nil && seen.Resource.UID == "uid-1", true)
	view(t, s, func(tx store.Tx) error {
		r, err := tx.Resource(key("acme", "prod", "kv1"))
		wantNoErr(t, "Resource kv1", err)
		equal(t, "kv1's UID", r.UID, "uid-1")
		_, err = tx.Resource(key("acme", "prod", "kv2"))
		wantErr(t, "Resource kv2", err, store.ErrNotFound)
		return nil
	})
}
