package storetest

import (
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Leases with a fencing epoch (store.Leases; spec/runtime-v1.md §10.5,
// repo decision 0062) and the fenced writes of the events dispatcher.
var leaseCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"LeaseAcquireRenewTakeover", testLeaseAcquire},
	{"LeaseFencesWrites", testLeaseFences},
}

const leaseTTL = 15 * time.Second

func acquire(t *testing.T, s store.Store, holder string, now time.Time) store.Lease {
	t.Helper()
	var l store.Lease
	update(t, s, func(tx store.Tx) error {
		var err error
		l, err = tx.AcquireLease("events", holder, now, leaseTTL)
		return err
	})
	return l
}

func renew(t *testing.T, s store.Store, holder string, f store.Fence, now time.Time) bool {
	t.Helper()
	var ok bool
	update(t, s, func(tx store.Tx) error {
		var err error
		ok, err = tx.RenewLease(holder, f, now, leaseTTL)
		return err
	})
	return ok
}

func lease(holder string, epoch int64, expires time.Time) store.Lease {
	return store.Lease{Name: "events", Holder: holder, Epoch: epoch, Expires: expires.Truncate(time.Millisecond)}
}

// A lease is held by one holder until its deadline: renewed by its holder
// at its epoch (after the deadline too while nobody took over), refused
// to another holder before the deadline, taken over after it (or after a
// release, or by its own holder's next run) with the next epoch.
func testLeaseAcquire(t *testing.T, s store.Store) {
	var err error
	view(t, s, func(tx store.Tx) error { _, err = tx.Lease("events"); return nil })
	wantErr(t, "a lease never acquired", err, store.ErrNotFound)

	a1 := acquire(t, s, "host-a", at(0))
	equal(t, "the first acquisition", a1, lease("host-a", 1, at(leaseTTL)))
	equal(t, "another holder before the deadline gets the lease as it stands", acquire(t, s, "host-b", at(10*time.Second)), a1)
	equal(t, "a renewal by the holder", renew(t, s, "host-a", a1.Fence(), at(10*time.Second)), true)
	renewed := lease("host-a", 1, at(10*time.Second+leaseTTL))
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Lease("events")
		wantNoErr(t, "Lease", err)
		equal(t, "the renewed lease", got, renewed)
		return nil
	})
	equal(t, "a renewal by another holder", renew(t, s, "host-b", a1.Fence(), at(11*time.Second)), false)
	equal(t, "a renewal of another epoch", renew(t, s, "host-a", store.Fence{Lease: "events", Epoch: 2}, at(11*time.Second)), false)
	equal(t, "still held at the renewed deadline's eve", acquire(t, s, "host-b", at(24*time.Second)), renewed)

	// The deadline passed with nobody taking over: the holder's renewal
	// keeps its epoch (nobody acted under a later one).
	equal(t, "a renewal after the deadline, no takeover", renew(t, s, "host-a", a1.Fence(), at(26*time.Second)), true)
	equal(t, "still held after the late renewal", acquire(t, s, "host-b", at(40*time.Second)), lease("host-a", 1, at(26*time.Second+leaseTTL)))
	// The deadline passed again: another takes over; the old holder's
	// renewal is refused.
	b2 := acquire(t, s, "host-b", at(41*time.Second))
	equal(t, "a takeover after the deadline", b2, lease("host-b", 2, at(41*time.Second+leaseTTL)))
	equal(t, "a renewal by the holder taken over", renew(t, s, "host-a", a1.Fence(), at(42*time.Second)), false)
	equal(t, "the old holder asking again gets the new holder's", acquire(t, s, "host-a", at(42*time.Second)), b2)

	// A release ends the epoch at once; a holder's own earlier run is
	// taken over at once too (a restarted host).
	var released, wrong bool
	update(t, s, func(tx store.Tx) error {
		var err error
		if wrong, err = tx.ReleaseLease("host-a", b2.Fence(), at(43*time.Second)); err != nil {
			return err
		}
		released, err = tx.ReleaseLease("host-b", b2.Fence(), at(43*time.Second))
		return err
	})
	equal(t, "a release by another holder", wrong, false)
	equal(t, "a release by the holder", released, true)
	equal(t, "an acquisition after a release", acquire(t, s, "host-a", at(44*time.Second)), lease("host-a", 3, at(44*time.Second+leaseTTL)))
	equal(t, "the holder's next run", acquire(t, s, "host-a", at(45*time.Second)), lease("host-a", 4, at(45*time.Second+leaseTTL)))
}

// Every write of firings and claims made under an epoch no longer
// current is refused with ErrFenced (an ErrConflict) and changes nothing;
// the current epoch's writes record it; QueueReleaseClaims releases only
// the claims of earlier epochs.
func testLeaseFences(t *testing.T, s store.Store) {
	never := store.Fence{Lease: "events", Epoch: 1}
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.RecordFiring(firing("uid-t", 0, store.FiringRecorded), never)
	})
	wantErr(t, "a write under a lease never acquired", err, store.ErrFenced)

	old := acquire(t, s, "host-a", at(0)).Fence()
	f := firing("uid-t", 0, store.FiringRecorded)
	update(t, s, func(tx store.Tx) error { return tx.RecordFiring(f, old) })
	got, err := readFiring(t, s, "uid-t", f.Minute)
	wantNoErr(t, "Firing", err)
	equal(t, "the firing's epoch", got.Epoch, int64(1))
	update(t, s, func(tx store.Tx) error {
		return tx.QueueSend([]*store.QueueMessage{msg("uid-q", "m1", []byte("1"), 0), msg("uid-q", "m2", []byte("2"), 0), msg("uid-q", "m3", []byte("3"), 0)})
	})
	until := at(time.Hour).Truncate(time.Millisecond)
	update(t, s, func(tx store.Tx) error {
		_, err := tx.QueueClaim("uid-q", "b-old", at(time.Second), until, 2, old) // m1, m2
		return err
	})

	cur := acquire(t, s, "host-b", at(leaseTTL)).Fence()
	equal(t, "the takeover's epoch", cur.Epoch, int64(2))
	stale := map[string]func(tx store.Tx) error{
		"RecordFiring": func(tx store.Tx) error {
			return tx.RecordFiring(firing("uid-t", time.Minute, store.FiringRecorded), old)
		},
		"MoveFiring": func(tx store.Tx) error {
			_, err := tx.MoveFiring("uid-t", f.Minute, store.FiringRecorded, store.FiringDispatching, "uid-v", at(time.Second), old)
			return err
		},
		"QueueClaim": func(tx store.Tx) error {
			_, err := tx.QueueClaim("uid-q", "b-late", at(time.Second), until, 10, old)
			return err
		},
		"QueueAck": func(tx store.Tx) error { _, err := tx.QueueAck("uid-q", "b-old", []string{"m1"}, old); return err },
		"QueueRelease": func(tx store.Tx) error {
			_, err := tx.QueueRelease("uid-q", "b-old", "m2", at(time.Second), 1, old)
			return err
		},
		"QueueReleaseClaims": func(tx store.Tx) error { _, err := tx.QueueReleaseClaims("uid-q", at(time.Second), old); return err },
	}
	for name, fn := range stale {
		err := s.Update(t.Context(), fn)
		wantErr(t, name+" under a stale epoch", err, store.ErrFenced)
		wantErr(t, name+" under a stale epoch", err, store.ErrConflict)
	}
	got, err = readFiring(t, s, "uid-t", f.Minute)
	wantNoErr(t, "Firing", err)
	equal(t, "the firing after the stale writes", got.State, store.FiringRecorded)
	_, err = readFiring(t, s, "uid-t", at(time.Minute).Truncate(time.Minute))
	wantErr(t, "a firing recorded under a stale epoch", err, store.ErrNotFound)
	held := func(m *store.QueueMessage, claim string, deliverable time.Time, attempts int) *store.QueueMessage {
		c := *m
		c.Claim, c.DeliverableAt, c.Attempts = claim, deliverable, attempts
		return &c
	}
	m1, m2, m3 := msg("uid-q", "m1", []byte("1"), 0), msg("uid-q", "m2", []byte("2"), 0), msg("uid-q", "m3", []byte("3"), 0)
	equal(t, "the queue after the stale writes", queueMessages(t, s, "uid-q", 10),
		[]*store.QueueMessage{m3, held(m1, "b-old", until, 1), held(m2, "b-old", until, 1)})

	// The current epoch: its writes go through and carry it; the claims of
	// the earlier epoch are released, its own are kept.
	var moved bool
	var released int
	now := at(20 * time.Second).Truncate(time.Millisecond)
	update(t, s, func(tx store.Tx) error {
		var err error
		if moved, err = tx.MoveFiring("uid-t", f.Minute, store.FiringRecorded, store.FiringDispatching, "uid-v", now, cur); err != nil {
			return err
		}
		if _, err = tx.QueueClaim("uid-q", "b-new", now, until, 1, cur); err != nil { // m3
			return err
		}
		released, err = tx.QueueReleaseClaims("uid-q", now, cur)
		return err
	})
	equal(t, "a move under the current epoch", moved, true)
	got, err = readFiring(t, s, "uid-t", f.Minute)
	wantNoErr(t, "Firing", err)
	equal(t, "the moved firing's epoch", got.Epoch, int64(2))
	equal(t, "claims of the earlier epoch released", released, 2)
	equal(t, "the queue after the release", queueMessages(t, s, "uid-q", 10),
		[]*store.QueueMessage{held(m1, "", now, 1), held(m2, "", now, 1), held(m3, "b-new", until, 1)})
	var acked int
	update(t, s, func(tx store.Tx) error {
		var err error
		acked, err = tx.QueueAck("uid-q", "b-new", []string{"m3"}, cur)
		return err
	})
	equal(t, "an ack under the current epoch", acked, 1)
}
