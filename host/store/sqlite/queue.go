package sqlite

import (
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The edge.queue messages of store.Queue (migration 00006_queue.sql).

// QueueSend stores msgs; a taken (queue, id) wraps store.ErrConflict.
func (t *tx) QueueSend(msgs []*store.QueueMessage) error {
	for _, m := range msgs {
		body := m.Body
		if body == nil {
			body = []byte{}
		}
		_, err := t.exec(qQueueSend, m.Queue, m.ID, m.Tenant, body, m.AcceptedAt.UnixMilli(), m.DeliverableAt.UnixMilli(), m.Attempts, len(body))
		switch {
		case isConflict(err):
			return fmt.Errorf("send message %s to queue %s: %w", m.ID, m.Queue, store.ErrConflict)
		case err != nil:
			return fmt.Errorf("send message %s to queue %s: %w", m.ID, m.Queue, err)
		}
	}
	return nil
}

// QueueMessages lists up to limit messages of queue by deliverability.
func (t *tx) QueueMessages(queue string, limit int) (_ []*store.QueueMessage, rerr error) {
	rows, err := t.query(qQueueMessages, queue, limit)
	if err != nil {
		return nil, fmt.Errorf("list messages of queue %s: %w", queue, err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	out := []*store.QueueMessage{}
	for rows.Next() {
		m := &store.QueueMessage{Queue: queue}
		var accepted, deliverable int64
		if err := rows.Scan(&m.Tenant, &m.ID, &m.Body, &accepted, &deliverable, &m.Attempts, &m.Claim); err != nil {
			return nil, fmt.Errorf("list messages of queue %s: %w", queue, err)
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt, m.DeliverableAt = time.UnixMilli(accepted).UTC(), time.UnixMilli(deliverable).UTC()
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list messages of queue %s: %w", queue, err)
	}
	return out, nil
}
