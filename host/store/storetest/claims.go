package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// ClaimIdempotency is insert-only: the first record under a key stays,
// a second claim of the key is ErrConflict and changes nothing
// (spec/host-api-v1alpha3.md §3.5).
func testClaimIdempotency(t *testing.T, s store.Store) {
	first := idem("alice", "prod", "takoform-abc", at(0))
	second := idem("alice", "prod", "takoform-abc", at(time.Hour))
	second.Status, second.Body = 409, []byte(`{"error":{}}`)
	other := idem("bob", "prod", "takoform-abc", at(0))
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "ClaimIdempotency", tx.ClaimIdempotency(first))
		wantErr(t, "ClaimIdempotency of a claimed key", tx.ClaimIdempotency(second), store.ErrConflict)
		wantNoErr(t, "ClaimIdempotency of another principal's key", tx.ClaimIdempotency(other))
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		wantErr(t, "ClaimIdempotency of a committed key", tx.ClaimIdempotency(second), store.ErrConflict)
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Idempotency(laneA, "acme", "alice", "prod", "takoform-abc")
		wantNoErr(t, "Idempotency", err)
		equal(t, "first claim kept", got, first)
		got, err = tx.Idempotency(laneA, "acme", "bob", "prod", "takoform-abc")
		wantNoErr(t, "Idempotency", err)
		equal(t, "other principal's record", got, other)
		return nil
	})
}

// 16 Updates claim one key at the same moment: exactly one succeeds, and
// every other sees the winner's record (its claim is ErrConflict).
func testClaimIdempotencyConcurrent(t *testing.T, s store.Store) {
	const callers = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	won := make([]bool, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(context.Background(), func(tx store.Tx) error {
				won[i] = false
				r := idem("alice", "prod", "once", at(time.Duration(i)*time.Second))
				err := tx.ClaimIdempotency(r)
				won[i] = err == nil
				if err == nil {
					return nil
				}
				_, rerr := tx.Idempotency(laneA, "acme", "alice", "prod", "once")
				if rerr != nil {
					return rerr
				}
				return err
			})
		})
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range callers {
		if won[i] {
			winners++
			wantNoErr(t, "winning Update", errs[i])
		} else {
			wantErr(t, "losing Update", errs[i], store.ErrConflict)
		}
	}
	equal(t, "claims that succeeded", winners, 1)
}

// ClaimOperation reads like Operation; holding it across transactions is
// the store's own test (it needs two open transactions at once).
func testClaimOperation(t *testing.T, s store.Store) {
	o := op("op_1", key("acme", "prod", "sessions"), at(time.Second), at(0))
	update(t, s, func(tx store.Tx) error { return tx.PutOperation(o) })
	update(t, s, func(tx store.Tx) error {
		got, err := tx.ClaimOperation("op_1")
		wantNoErr(t, "ClaimOperation", err)
		equal(t, "claimed operation", got, o)
		_, err = tx.ClaimOperation("op_2")
		wantErr(t, "ClaimOperation of an unknown id", err, store.ErrNotFound)
		return nil
	})
}
