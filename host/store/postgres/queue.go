package postgres

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
)

// The edge.queue messages of store.Queue (migration 00009_queue.sql);
// the listing is sqlcore's (Core.QueueMessages). A send is one statement
// over arrays, one round trip for the whole batch (repo decision 0020).

const (
	// One statement for a whole batch (sendBatch is all-or-nothing).
	pgQueueSend = `INSERT INTO queue_messages (queue, id, tenant, body, accepted_at, deliverable_at, attempts, size)
		SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BYTEA[], $5::BIGINT[], $6::BIGINT[], $7::INTEGER[], $8::BIGINT[])`
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
