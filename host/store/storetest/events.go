package storetest

import (
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Cron firings (store.Firings) and queue delivery (store.QueueDelivery)
// of the events dispatcher (spec/runtime-v1.md §2.5, §2.6).
var eventCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"FiringsRecordedOnce", testFiringsOnce},
	{"FiringsMoveAndSweep", testFiringsMove},
	{"QueueClaimAckRelease", testQueueClaim},
	{"QueueReleaseClaimsExpireStats", testQueueReleaseExpire},
}

func firing(trigger string, minute time.Duration, state store.FiringState) *store.Firing {
	return &store.Firing{Trigger: trigger, Minute: at(minute).Truncate(time.Minute), Tenant: "acme", State: state, UpdatedAt: at(minute).Truncate(time.Millisecond)}
}

func readFiring(t *testing.T, s store.Store, trigger string, minute time.Time) (*store.Firing, error) {
	t.Helper()
	var f *store.Firing
	var err error
	view(t, s, func(tx store.Tx) error {
		f, err = tx.Firing(trigger, minute)
		return nil
	})
	return f, err
}

// A (trigger, minute) is recorded once: a second RecordFiring is
// ErrConflict and changes nothing, in the same Update or a later one;
// another minute or trigger is its own; an unrecorded one is ErrNotFound.
func testFiringsOnce(t *testing.T, s store.Store) {
	a := firing("uid-t1", 0, store.FiringRecorded)
	update(t, s, func(tx store.Tx) error { return tx.RecordFiring(a, store.Fence{}) })
	again := firing("uid-t1", 0, store.FiringOK)
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.RecordFiring(again, store.Fence{}) })
	wantErr(t, "a second RecordFiring of one minute", err, store.ErrConflict)
	got, err := readFiring(t, s, "uid-t1", a.Minute)
	wantNoErr(t, "Firing", err)
	equal(t, "the firing after a refused second record", got, a)
	update(t, s, func(tx store.Tx) error {
		if err := tx.RecordFiring(firing("uid-t1", time.Minute, store.FiringRecorded), store.Fence{}); err != nil {
			return err
		}
		return tx.RecordFiring(firing("uid-t2", 0, store.FiringRecorded), store.Fence{})
	})
	_, err = readFiring(t, s, "uid-t3", a.Minute)
	wantErr(t, "an unrecorded firing", err, store.ErrNotFound)
}

// MoveFiring moves only from the state named; OpenFirings lists recorded
// and dispatching firings from a minute on, by minute then trigger;
// SweepFirings deletes settled firings of earlier minutes only; deleting
// the trigger's resource deletes its firings.
func testFiringsMove(t *testing.T, s store.Store) {
	trig := kv("acme", "prod", "nightly", "uid-trig")
	create(t, s, trig)
	f0 := firing(trig.UID, 0, store.FiringRecorded)
	f1 := firing(trig.UID, time.Minute, store.FiringRecorded)
	f2 := firing("uid-other", time.Minute, store.FiringDispatching)
	f3 := firing("uid-other", 2*time.Minute, store.FiringOK)
	update(t, s, func(tx store.Tx) error {
		for _, f := range []*store.Firing{f0, f1, f2, f3} {
			if err := tx.RecordFiring(f, store.Fence{}); err != nil {
				return err
			}
		}
		return nil
	})
	var open []*store.Firing
	view(t, s, func(tx store.Tx) error {
		var err error
		open, err = tx.OpenFirings(f0.Minute, 10)
		wantNoErr(t, "OpenFirings", err)
		return nil
	})
	equal(t, "open firings", open, []*store.Firing{f0, f2, f1})
	view(t, s, func(tx store.Tx) error {
		var err error
		open, err = tx.OpenFirings(f1.Minute, 1)
		wantNoErr(t, "OpenFirings", err)
		return nil
	})
	equal(t, "open firings from the second minute, one", open, []*store.Firing{f2})

	var moved, wrong bool
	later := at(30 * time.Second).Truncate(time.Millisecond)
	update(t, s, func(tx store.Tx) error {
		var err error
		if wrong, err = tx.MoveFiring(trig.UID, f0.Minute, store.FiringDispatching, store.FiringOK, "uid-v", later, store.Fence{}); err != nil {
			return err
		}
		moved, err = tx.MoveFiring(trig.UID, f0.Minute, store.FiringRecorded, store.FiringDispatching, "uid-v", later, store.Fence{})
		return err
	})
	equal(t, "a move from a state the firing is not in", wrong, false)
	equal(t, "a move from the firing's state", moved, true)
	got, err := readFiring(t, s, trig.UID, f0.Minute)
	wantNoErr(t, "Firing", err)
	equal(t, "the moved firing", got, &store.Firing{Trigger: trig.UID, Minute: f0.Minute, Tenant: "acme", State: store.FiringDispatching, Version: "uid-v", UpdatedAt: later})
	update(t, s, func(tx store.Tx) error {
		_, err := tx.MoveFiring(trig.UID, f0.Minute, store.FiringDispatching, store.FiringFailed, "uid-v", later, store.Fence{})
		return err
	})

	var swept int
	update(t, s, func(tx store.Tx) error {
		var err error
		swept, err = tx.SweepFirings(at(3 * time.Minute))
		return err
	})
	equal(t, "firings swept (the settled ones)", swept, 2)
	_, err = readFiring(t, s, "uid-other", f3.Minute)
	wantErr(t, "a swept firing", err, store.ErrNotFound)
	if _, err := readFiring(t, s, trig.UID, f1.Minute); err != nil {
		t.Errorf("an open firing was swept: %v", err)
	}
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(trig.UID) })
	_, err = readFiring(t, s, trig.UID, f1.Minute)
	wantErr(t, "a firing of a deleted trigger", err, store.ErrNotFound)
	if _, err := readFiring(t, s, "uid-other", f2.Minute); err != nil {
		t.Errorf("another trigger's firing went with the deleted trigger: %v", err)
	}
}

func claim(t *testing.T, s store.Store, queue, batch string, now, until time.Time, limit int) []*store.QueueMessage {
	t.Helper()
	var got []*store.QueueMessage
	update(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.QueueClaim(queue, batch, now, until, limit, store.Fence{})
		return err
	})
	return got
}

// QueueClaim takes the deliverable messages in order, at most limit,
// returns them by ID with Attempts + 1, the claim and its deadline, and
// hides them from a second claim until the deadline; QueueAck deletes
// only what the claim holds; QueueRelease returns a held message with the
// given time and attempts.
func testQueueClaim(t *testing.T, s store.Store) {
	m1 := msg("uid-q", "m1", []byte("one"), time.Second)
	m2 := msg("uid-q", "m2", []byte("two"), 0)
	m3 := msg("uid-q", "m3", []byte("three"), 2*time.Second)
	m4 := msg("uid-q", "m4", []byte("later"), time.Hour)
	update(t, s, func(tx store.Tx) error { return tx.QueueSend([]*store.QueueMessage{m1, m2, m3, m4}) })
	until := at(time.Minute).Truncate(time.Millisecond)
	got := claim(t, s, "uid-q", "b1", at(5*time.Second), until, 2)
	held := func(m *store.QueueMessage, batch string, attempts int) *store.QueueMessage {
		c := *m
		c.Claim, c.DeliverableAt, c.Attempts = batch, until, attempts
		return &c
	}
	equal(t, "the first claim", got, []*store.QueueMessage{held(m1, "b1", 1), held(m2, "b1", 1)})
	equal(t, "a second claim", claim(t, s, "uid-q", "b2", at(5*time.Second), until, 10), []*store.QueueMessage{held(m3, "b2", 1)})
	equal(t, "a claim with nothing deliverable", claim(t, s, "uid-q", "b3", at(5*time.Second), until, 10), []*store.QueueMessage{})

	var acked, wrongAck int
	var released, wrongRelease bool
	retryAt := at(10 * time.Second).Truncate(time.Millisecond)
	update(t, s, func(tx store.Tx) error {
		var err error
		if wrongAck, err = tx.QueueAck("uid-q", "b2", []string{"m1"}, store.Fence{}); err != nil {
			return err
		}
		if acked, err = tx.QueueAck("uid-q", "b1", []string{"m1", "m9"}, store.Fence{}); err != nil {
			return err
		}
		if wrongRelease, err = tx.QueueRelease("uid-q", "b1", "m3", retryAt, 1, store.Fence{}); err != nil {
			return err
		}
		released, err = tx.QueueRelease("uid-q", "b1", "m2", retryAt, 1, store.Fence{})
		return err
	})
	equal(t, "an ack by a batch not holding the message", wrongAck, 0)
	equal(t, "an ack by its batch", acked, 1)
	equal(t, "a release by a batch not holding the message", wrongRelease, false)
	equal(t, "a release by its batch", released, true)
	m2r := *m2
	m2r.DeliverableAt, m2r.Attempts = retryAt, 1
	equal(t, "the queue after ack and release", queueMessages(t, s, "uid-q", 10), []*store.QueueMessage{&m2r, held(m3, "b2", 1), m4})
	equal(t, "a claim before the retry's time", claim(t, s, "uid-q", "b4", at(9*time.Second), until, 10), []*store.QueueMessage{})
	equal(t, "a claim after the retry's time", claim(t, s, "uid-q", "b4", retryAt, until, 10), []*store.QueueMessage{held(m2, "b4", 2)})
	// A claim never settled: its messages are deliverable again at its deadline.
	until2 := at(2 * time.Minute).Truncate(time.Millisecond)
	again := func(m *store.QueueMessage, attempts int) *store.QueueMessage {
		c := *m
		c.Claim, c.DeliverableAt, c.Attempts = "b5", until2, attempts
		return &c
	}
	equal(t, "a claim at the first claims' deadline", claim(t, s, "uid-q", "b5", until, until2, 10), []*store.QueueMessage{again(m2, 3), again(m3, 2)})
}

// QueueReleaseClaims returns every message claimed under an earlier
// epoch deliverable at once, attempts kept; QueueExpire deletes unclaimed messages accepted before
// the instant; QueueStats counts depth, the oldest acceptance, the next
// deliverable instant and the deliverable ones up to a cap.
func testQueueReleaseExpire(t *testing.T, s store.Store) {
	var st store.QueueStats
	stats := func(now time.Time, max int) store.QueueStats {
		view(t, s, func(tx store.Tx) error {
			var err error
			st, err = tx.QueueStats("uid-q", now, max)
			wantNoErr(t, "QueueStats", err)
			return nil
		})
		return st
	}
	equal(t, "stats of an empty queue", stats(at(0), 10), store.QueueStats{})
	old := msg("uid-q", "old", []byte("o"), 0)
	a := msg("uid-q", "a", []byte("a"), 0)
	a.AcceptedAt = at(time.Second).Truncate(time.Millisecond)
	b := msg("uid-q", "b", []byte("b"), 0)
	b.AcceptedAt, b.DeliverableAt = at(time.Second).Truncate(time.Millisecond), at(time.Second).Truncate(time.Millisecond)
	c := msg("uid-q", "c", []byte("c"), time.Hour)
	c.AcceptedAt = at(time.Second).Truncate(time.Millisecond)
	update(t, s, func(tx store.Tx) error { return tx.QueueSend([]*store.QueueMessage{old, a, b, c}) })
	equal(t, "stats", stats(at(2*time.Second), 10), store.QueueStats{Depth: 4, Deliverable: 3, OldestAccepted: old.AcceptedAt, NextDeliverable: old.DeliverableAt})
	equal(t, "stats with a cap", stats(at(2*time.Second), 2).Deliverable, 2)
	until := at(time.Minute).Truncate(time.Millisecond)
	got := claim(t, s, "uid-q", "b1", at(2*time.Second), until, 2) // old, a
	equal(t, "claimed", len(got), 2)
	equal(t, "deliverable after the claim", stats(at(2*time.Second), 10).Deliverable, 1)
	var expired, releasedN int
	now := at(3 * time.Second).Truncate(time.Millisecond)
	fence := acquire(t, s, "host-a", now).Fence() // epoch 1, after the claims' 0
	update(t, s, func(tx store.Tx) error {
		var err error
		if expired, err = tx.QueueExpire("uid-q", at(time.Second)); err != nil { // old is claimed: kept
			return err
		}
		releasedN, err = tx.QueueReleaseClaims("uid-q", now, fence)
		return err
	})
	equal(t, "expired while claimed", expired, 0)
	equal(t, "claims released", releasedN, 2)
	oldR, aR := *old, *a
	oldR.DeliverableAt, oldR.Attempts = now, 1
	aR.DeliverableAt, aR.Attempts = now, 1
	equal(t, "the queue after the release", queueMessages(t, s, "uid-q", 10), []*store.QueueMessage{b, &aR, &oldR, c})
	update(t, s, func(tx store.Tx) error {
		var err error
		expired, err = tx.QueueExpire("uid-q", at(time.Second))
		return err
	})
	equal(t, "expired", expired, 1)
	equal(t, "the queue after expiry", queueMessages(t, s, "uid-q", 10), []*store.QueueMessage{b, &aR, c})
	equal(t, "usage after expiry", usageOf(t, s, "acme").QueueBytes, int64(3))
}
