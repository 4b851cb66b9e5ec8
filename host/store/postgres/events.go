package postgres

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// Cron firings (store.Firings) and queue delivery (store.QueueDelivery)
// of migration 00014_events.sql, fenced by the leases of lease.go. A claim locks the rows it takes and skips
// rows another transaction holds, so two claimants never take one message.

const (
	pgRecordFiring = `INSERT INTO cron_firings (trigger_uid, minute, tenant, state, version, updated_at, epoch)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (trigger_uid, minute) DO NOTHING`
	pgFiring     = `SELECT tenant, state, version, updated_at, epoch FROM cron_firings WHERE trigger_uid = $1 AND minute = $2`
	pgMoveFiring = `UPDATE cron_firings SET state = $4, version = $5, updated_at = $6, epoch = $7
		WHERE trigger_uid = $1 AND minute = $2 AND state = $3`
	pgOpenFirings = `SELECT trigger_uid, minute, tenant, state, version, updated_at, epoch FROM cron_firings
		WHERE state IN ('recorded', 'dispatching') AND minute >= $1 ORDER BY minute, trigger_uid LIMIT $2`
	pgSweepFirings = `DELETE FROM cron_firings WHERE minute < $1 AND state NOT IN ('recorded', 'dispatching')`
	pgQueueClaim   = `UPDATE queue_messages SET claim = $2, deliverable_at = $4, attempts = attempts + 1, claim_epoch = $6
		WHERE queue = $1 AND id IN (SELECT id FROM queue_messages WHERE queue = $1 AND deliverable_at <= $3
			ORDER BY deliverable_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
		RETURNING tenant, id, body, accepted_at, attempts`
	pgQueueAck     = `DELETE FROM queue_messages WHERE queue = $1 AND claim = $2 AND id = ANY($3)`
	pgQueueRelease = `UPDATE queue_messages SET claim = '', deliverable_at = $4, attempts = $5
		WHERE queue = $1 AND id = $2 AND claim = $3`
	pgQueueReleaseClaims = `UPDATE queue_messages SET claim = '', deliverable_at = $2 WHERE queue = $1 AND claim <> '' AND claim_epoch < $3`
	pgQueueExpire        = `DELETE FROM queue_messages WHERE queue = $1 AND claim = '' AND accepted_at < $2`
	pgQueueStats         = `SELECT count(*), coalesce(min(accepted_at), 0), coalesce(min(deliverable_at), 0),
		(SELECT count(*) FROM (SELECT 1 FROM queue_messages WHERE queue = $1 AND deliverable_at <= $2 LIMIT $3) d)
		FROM queue_messages WHERE queue = $1`
)

func minuteText(m time.Time) string { return m.UTC().Format(time.RFC3339) }

// RecordFiring inserts f; a recorded (trigger, minute) wraps ErrConflict.
func (t *tx) RecordFiring(f *store.Firing, fence store.Fence) error {
	if err := t.fenced(fence); err != nil {
		return err
	}
	f.Epoch = fence.Epoch
	tag, err := t.exec(pgRecordFiring, f.Trigger, f.Minute.UnixMilli(), f.Tenant, string(f.State), f.Version, f.UpdatedAt.UnixMilli(), f.Epoch)
	switch {
	case err != nil:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, minuteText(f.Minute), err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, minuteText(f.Minute), store.ErrConflict)
	}
	return nil
}

// Firing reads one firing; ErrNotFound when unrecorded.
func (t *tx) Firing(trigger string, minute time.Time) (*store.Firing, error) {
	f := &store.Firing{Trigger: trigger, Minute: time.UnixMilli(minute.UnixMilli()).UTC()}
	var state string
	var updated int64
	if err := t.queryRow(pgFiring, trigger, minute.UnixMilli()).Scan(&f.Tenant, &state, &f.Version, &updated, &f.Epoch); err != nil {
		return nil, notFound(err, "the firing of "+trigger+" at "+minuteText(minute))
	}
	f.State, f.UpdatedAt = store.FiringState(state), time.UnixMilli(updated).UTC()
	return f, nil
}

// MoveFiring moves a firing from state from to state to.
func (t *tx) MoveFiring(trigger string, minute time.Time, from, to store.FiringState, version string, at time.Time, fence store.Fence) (bool, error) {
	if err := t.fenced(fence); err != nil {
		return false, err
	}
	tag, err := t.exec(pgMoveFiring, trigger, minute.UnixMilli(), string(from), string(to), version, at.UnixMilli(), fence.Epoch)
	if err != nil {
		return false, fmt.Errorf("move the firing of %s: %w", trigger, err)
	}
	return tag.RowsAffected() == 1, nil
}

// OpenFirings lists open firings of minutes from since.
func (t *tx) OpenFirings(since time.Time, limit int) ([]*store.Firing, error) {
	out := []*store.Firing{}
	err := t.queryAll(func(rows pgx.Rows) error {
		f := &store.Firing{}
		var minute, updated int64
		var state string
		if err := rows.Scan(&f.Trigger, &minute, &f.Tenant, &state, &f.Version, &updated, &f.Epoch); err != nil {
			return err
		}
		f.Minute, f.State, f.UpdatedAt = time.UnixMilli(minute).UTC(), store.FiringState(state), time.UnixMilli(updated).UTC()
		out = append(out, f)
		return nil
	}, pgOpenFirings, since.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("list open firings: %w", err)
	}
	return out, nil
}

// SweepFirings deletes settled firings of minutes before before.
func (t *tx) SweepFirings(before time.Time) (int, error) {
	tag, err := t.exec(pgSweepFirings, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sweep firings: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// QueueClaim claims up to limit deliverable messages for claim.
func (t *tx) QueueClaim(queue, claim string, now, until time.Time, limit int, fence store.Fence) ([]*store.QueueMessage, error) {
	if err := t.fenced(fence); err != nil {
		return nil, err
	}
	out := []*store.QueueMessage{}
	err := t.queryAll(func(rows pgx.Rows) error {
		m := &store.QueueMessage{Queue: queue, Claim: claim, DeliverableAt: time.UnixMilli(until.UnixMilli()).UTC()}
		var accepted int64
		if err := rows.Scan(&m.Tenant, &m.ID, &m.Body, &accepted, &m.Attempts); err != nil {
			return err
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt = time.UnixMilli(accepted).UTC()
		out = append(out, m)
		return nil
	}, pgQueueClaim, queue, claim, now.UnixMilli(), until.UnixMilli(), limit, fence.Epoch)
	if err != nil {
		return nil, fmt.Errorf("claim messages of queue %s: %w", queue, err)
	}
	slices.SortFunc(out, func(a, b *store.QueueMessage) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// QueueAck deletes the messages ids claim still holds.
func (t *tx) QueueAck(queue, claim string, ids []string, fence store.Fence) (int, error) {
	if err := t.fenced(fence); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := t.exec(pgQueueAck, queue, claim, ids)
	if err != nil {
		return 0, fmt.Errorf("acknowledge messages of queue %s: %w", queue, err)
	}
	return int(tag.RowsAffected()), nil
}

// QueueRelease unclaims one message claim holds.
func (t *tx) QueueRelease(queue, claim, id string, deliverableAt time.Time, attempts int, fence store.Fence) (bool, error) {
	if err := t.fenced(fence); err != nil {
		return false, err
	}
	tag, err := t.exec(pgQueueRelease, queue, id, claim, deliverableAt.UnixMilli(), attempts)
	if err != nil {
		return false, fmt.Errorf("release message %s of queue %s: %w", id, queue, err)
	}
	return tag.RowsAffected() == 1, nil
}

// QueueReleaseClaims unclaims the messages of queue claimed under
// earlier epochs than fence's.
func (t *tx) QueueReleaseClaims(queue string, now time.Time, fence store.Fence) (int, error) {
	if err := t.fenced(fence); err != nil {
		return 0, err
	}
	tag, err := t.exec(pgQueueReleaseClaims, queue, now.UnixMilli(), fence.Epoch)
	if err != nil {
		return 0, fmt.Errorf("release the claims of queue %s: %w", queue, err)
	}
	return int(tag.RowsAffected()), nil
}

// QueueExpire deletes the unclaimed messages accepted before before.
func (t *tx) QueueExpire(queue string, before time.Time) (int, error) {
	tag, err := t.exec(pgQueueExpire, queue, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("expire messages of queue %s: %w", queue, err)
	}
	return int(tag.RowsAffected()), nil
}

// QueueStats reads one queue's figures.
func (t *tx) QueueStats(queue string, now time.Time, max int) (store.QueueStats, error) {
	var st store.QueueStats
	var oldest, next int64
	if err := t.queryRow(pgQueueStats, queue, now.UnixMilli(), max).Scan(&st.Depth, &oldest, &next, &st.Deliverable); err != nil {
		return st, fmt.Errorf("read queue %s: %w", queue, err)
	}
	if st.Depth > 0 {
		st.OldestAccepted, st.NextDeliverable = time.UnixMilli(oldest).UTC(), time.UnixMilli(next).UTC()
	}
	return st, nil
}
