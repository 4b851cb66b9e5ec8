package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// The edge.queue messages of store.Queue (migration 00009_queue.sql).

const (
	// One statement for a whole batch (sendBatch is all-or-nothing).
	pgQueueSend = `INSERT INTO queue_messages (queue, id, tenant, body, accepted_at, deliverable_at, attempts, size)
		SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BYTEA[], $5::BIGINT[], $6::BIGINT[], $7::INTEGER[], $8::BIGINT[])`
	pgQueueMessages = `SELECT tenant, id, body, accepted_at, deliverable_at, attempts, claim FROM queue_messages
		WHERE queue = $1 ORDER BY deliverable_at, id LIMIT $2`
)

// QueueSend stores msgs in one statement; a taken (queue, id) wraps
// store.ErrConflict.
func (t *tx) QueueSend(msgs []*store.QueueMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	n := len(msgs)
	queues, ids, tenants := make([]string, n), make([]string, n), make([]string, n)
	bodies := make([][]byte, n)
	accepted, deliverable, sizes := make([]int64, n), make([]int64, n), make([]int64, n)
	attempts := make([]int32, n)
	for i, m := range msgs {
		queues[i], ids[i], tenants[i] = m.Queue, m.ID, m.Tenant
		bodies[i] = m.Body
		if bodies[i] == nil {
			bodies[i] = []byte{}
		}
		accepted[i], deliverable[i] = m.AcceptedAt.UnixMilli(), m.DeliverableAt.UnixMilli()
		attempts[i], sizes[i] = int32(m.Attempts), int64(len(bodies[i]))
	}
	_, err := t.exec(pgQueueSend, queues, ids, tenants, bodies, accepted, deliverable, attempts, sizes)
	switch {
	case isConflict(err):
		return fmt.Errorf("send %d messages to queue %s: %w", n, msgs[0].Queue, store.ErrConflict)
	case err != nil:
		return fmt.Errorf("send %d messages to queue %s: %w", n, msgs[0].Queue, err)
	}
	return nil
}

// QueueMessages lists up to limit messages of queue by deliverability.
func (t *tx) QueueMessages(queue string, limit int) ([]*store.QueueMessage, error) {
	out := []*store.QueueMessage{}
	err := t.queryAll(func(rows pgx.Rows) error {
		m := &store.QueueMessage{Queue: queue}
		var a, d int64
		if err := rows.Scan(&m.Tenant, &m.ID, &m.Body, &a, &d, &m.Attempts, &m.Claim); err != nil {
			return err
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt, m.DeliverableAt = time.UnixMilli(a).UTC(), time.UnixMilli(d).UTC()
		out = append(out, m)
		return nil
	}, pgQueueMessages, queue, limit)
	if err != nil {
		return nil, fmt.Errorf("list messages of queue %s: %w", queue, err)
	}
	return out, nil
}
