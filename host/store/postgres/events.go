package postgres

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// Queue delivery (store.QueueDelivery) of migration 00014_events.sql,
// fenced by the leases of sqlcore (Core.Fenced), which also holds the cron
// firings and the queue writes both stores spell alike. A claim locks the
// rows it takes and skips rows another transaction holds, so two
// claimants never take one message.

const (
	pgQueueClaim = `UPDATE queue_messages SET claim = $2, deliverable_at = $4, attempts = attempts + 1, claim_epoch = $6
		WHERE queue = $1 AND id IN (SELECT id FROM queue_messages WHERE queue = $1 AND deliverable_at <= $3
			ORDER BY deliverable_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
		RETURNING tenant, id, body, accepted_at, attempts`
	pgQueueAck   = `DELETE FROM queue_messages WHERE queue = $1 AND claim = $2 AND id = ANY($3)`
	pgQueueStats = `SELECT count(*), coalesce(min(accepted_at), 0), coalesce(min(deliverable_at), 0),
		(SELECT count(*) FROM (SELECT 1 FROM queue_messages WHERE queue = $1 AND deliverable_at <= $2 LIMIT $3) d)
		FROM queue_messages WHERE queue = $1`
)

// QueueClaim claims up to limit deliverable messages for claim.
func (t *tx) QueueClaim(queue, claim string, now, until time.Time, limit int, fence store.Fence) ([]*store.QueueMessage, error) {
	if err := t.Fenced(fence); err != nil {
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
	if err := t.Fenced(fence); err != nil {
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
