package sqlite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Cron firings (store.Firings) and queue delivery (store.QueueDelivery)
// of migration 00011_events.sql, fenced by the leases of lease.go. The one writer serializes every Update,
// so a claim needs no row lock.

// RecordFiring inserts f; a recorded (trigger, minute) wraps ErrConflict.
func (t *tx) RecordFiring(f *store.Firing, fence store.Fence) error {
	if err := t.fenced(fence); err != nil {
		return err
	}
	f.Epoch = fence.Epoch
	res, err := t.exec(qRecordFiring, f.Trigger, f.Minute.UnixMilli(), f.Tenant, string(f.State), f.Version, f.UpdatedAt.UnixMilli(), f.Epoch)
	var n int
	if err == nil {
		n, err = affected(res)
	}
	switch {
	case err != nil:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, f.Minute.UTC().Format(time.RFC3339), err)
	case n == 0:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, f.Minute.UTC().Format(time.RFC3339), store.ErrConflict)
	}
	return nil
}

// Firing reads one firing; ErrNotFound when unrecorded.
func (t *tx) Firing(trigger string, minute time.Time) (*store.Firing, error) {
	f := &store.Firing{Trigger: trigger, Minute: time.UnixMilli(minute.UnixMilli()).UTC()}
	var state string
	var updated int64
	err := t.queryRow(qFiring, trigger, minute.UnixMilli()).Scan(&f.Tenant, &state, &f.Version, &updated, &f.Epoch)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("the firing of %s at %s", trigger, minute.UTC().Format(time.RFC3339)))
	}
	f.State, f.UpdatedAt = store.FiringState(state), time.UnixMilli(updated).UTC()
	return f, nil
}

// MoveFiring moves a firing from state from to state to.
func (t *tx) MoveFiring(trigger string, minute time.Time, from, to store.FiringState, version string, at time.Time, fence store.Fence) (bool, error) {
	if err := t.fenced(fence); err != nil {
		return false, err
	}
	res, err := t.exec(qMoveFiring, trigger, minute.UnixMilli(), string(from), string(to), version, at.UnixMilli(), fence.Epoch)
	if err != nil {
		return false, fmt.Errorf("move the firing of %s: %w", trigger, err)
	}
	n, err := affected(res)
	return n == 1, err
}

// OpenFirings lists open firings of minutes from since.
func (t *tx) OpenFirings(since time.Time, limit int) (_ []*store.Firing, rerr error) {
	rows, err := t.query(qOpenFirings, since.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("list open firings: %w", err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	out := []*store.Firing{}
	for rows.Next() {
		f := &store.Firing{}
		var minute, updated int64
		var state string
		if err := rows.Scan(&f.Trigger, &minute, &f.Tenant, &state, &f.Version, &updated, &f.Epoch); err != nil {
			return nil, fmt.Errorf("list open firings: %w", err)
		}
		f.Minute, f.State, f.UpdatedAt = time.UnixMilli(minute).UTC(), store.FiringState(state), time.UnixMilli(updated).UTC()
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list open firings: %w", err)
	}
	return out, nil
}

// SweepFirings deletes settled firings of minutes before before.
func (t *tx) SweepFirings(before time.Time) (int, error) {
	res, err := t.exec(qSweepFirings, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sweep firings: %w", err)
	}
	return affected(res)
}

// QueueClaim claims up to limit deliverable messages for claim.
func (t *tx) QueueClaim(queue, claim string, now, until time.Time, limit int, fence store.Fence) (_ []*store.QueueMessage, rerr error) {
	if err := t.fenced(fence); err != nil {
		return nil, err
	}
	rows, err := t.query(qQueueClaimable, queue, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("claim messages of queue %s: %w", queue, err)
	}
	out := []*store.QueueMessage{}
	for rows.Next() {
		m := &store.QueueMessage{Queue: queue, Claim: claim, DeliverableAt: time.UnixMilli(until.UnixMilli()).UTC()}
		var accepted int64
		if err := rows.Scan(&m.Tenant, &m.ID, &m.Body, &accepted, &m.Attempts); err != nil {
			return nil, errors.Join(fmt.Errorf("claim messages of queue %s: %w", queue, err), rows.Close())
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt = time.UnixMilli(accepted).UTC()
		m.Attempts++
		out = append(out, m)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("claim messages of queue %s: %w", queue, err)
	}
	slices.SortFunc(out, func(a, b *store.QueueMessage) int { return strings.Compare(a.ID, b.ID) })
	for _, m := range out {
		if _, err := t.exec(qQueueClaim, queue, m.ID, claim, until.UnixMilli(), fence.Epoch); err != nil {
			return nil, fmt.Errorf("claim message %s of queue %s: %w", m.ID, queue, err)
		}
	}
	return out, nil
}

// QueueAck deletes the messages ids claim still holds.
func (t *tx) QueueAck(queue, claim string, ids []string, fence store.Fence) (int, error) {
	if err := t.fenced(fence); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		res, err := t.exec(qQueueAck, queue, id, claim)
		if err != nil {
			return n, fmt.Errorf("acknowledge message %s of queue %s: %w", id, queue, err)
		}
		k, err := affected(res)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// QueueRelease unclaims one message claim holds.
func (t *tx) QueueRelease(queue, claim, id string, deliverableAt time.Time, attempts int, fence store.Fence) (bool, error) {
	if err := t.fenced(fence); err != nil {
		return false, err
	}
	res, err := t.exec(qQueueRelease, queue, id, claim, deliverableAt.UnixMilli(), attempts)
	if err != nil {
		return false, fmt.Errorf("release message %s of queue %s: %w", id, queue, err)
	}
	n, err := affected(res)
	return n == 1, err
}

// QueueReleaseClaims unclaims the messages of queue claimed under
// earlier epochs than fence's.
func (t *tx) QueueReleaseClaims(queue string, now time.Time, fence store.Fence) (int, error) {
	if err := t.fenced(fence); err != nil {
		return 0, err
	}
	res, err := t.exec(qQueueReleaseClaims, queue, now.UnixMilli(), fence.Epoch)
	if err != nil {
		return 0, fmt.Errorf("release the claims of queue %s: %w", queue, err)
	}
	return affected(res)
}

// QueueExpire deletes the unclaimed messages accepted before before.
func (t *tx) QueueExpire(queue string, before time.Time) (int, error) {
	res, err := t.exec(qQueueExpire, queue, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("expire messages of queue %s: %w", queue, err)
	}
	return affected(res)
}

// QueueStats reads one queue's figures.
func (t *tx) QueueStats(queue string, now time.Time, max int) (store.QueueStats, error) {
	var st store.QueueStats
	var oldest, next int64
	if err := t.queryRow(qQueueStats, queue).Scan(&st.Depth, &oldest, &next); err != nil {
		return st, fmt.Errorf("read queue %s: %w", queue, err)
	}
	if st.Depth == 0 {
		return st, nil
	}
	st.OldestAccepted, st.NextDeliverable = time.UnixMilli(oldest).UTC(), time.UnixMilli(next).UTC()
	if err := t.queryRow(qQueueDeliverable, queue, now.UnixMilli()).Scan(&st.Deliverable); err != nil {
		return st, fmt.Errorf("read queue %s: %w", queue, err)
	}
	st.Deliverable = min(st.Deliverable, max) // a count through the index; a subquery's LIMIT would scan its result
	return st, nil
}
