package sqlite

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
)

// The edge.queue messages of store.Queue (migration 00006_queue.sql);
// the listing is sqlcore's (Core.QueueMessages). A send inserts row by
// row: SQLite binds no arrays, and its one writer makes each insert a
// call into the same transaction, not a round trip.

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
