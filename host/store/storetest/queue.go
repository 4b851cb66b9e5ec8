package storetest

import (
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The edge.queue messages of store.Queue (spec/runtime-v1.md §5.4).
var queueCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"QueueSendAndRead", testQueueSend},
	{"QueueUsageAndQueueDelete", testQueueUsage},
}

func msg(queue, id string, body []byte, deliverable time.Duration) *store.QueueMessage {
	return &store.QueueMessage{Tenant: "acme", Queue: queue, ID: id, Body: body,
		AcceptedAt: at(0).Truncate(time.Millisecond), DeliverableAt: at(deliverable).Truncate(time.Millisecond)}
}

func queueMessages(t *testing.T, s store.Store, queue string, limit int) []*store.QueueMessage {
	t.Helper()
	var got []*store.QueueMessage
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.QueueMessages(queue, limit)
		wantNoErr(t, "QueueMessages", err)
		return nil
	})
	return got
}

// Messages read back exactly (every body byte, times to the
// millisecond), ordered by DeliverableAt then ID, per queue; a batch
// with a taken id is ErrConflict and stores none of its messages.
func testQueueSend(t *testing.T, s store.Store) {
	a := msg("uid-q1", "m2", kvBytes, time.Second)
	b := msg("uid-q1", "m1", []byte{}, time.Second)
	c := msg("uid-q1", "m0", []byte("later"), time.Minute)
	d := msg("uid-q2", "m0", []byte("other queue"), 0)
	update(t, s, func(tx store.Tx) error { return tx.QueueSend([]*store.QueueMessage{a, b, c, d}) })
	equal(t, "messages of uid-q1", queueMessages(t, s, "uid-q1", 10), []*store.QueueMessage{b, a, c})
	equal(t, "first message of uid-q1", queueMessages(t, s, "uid-q1", 1), []*store.QueueMessage{b})
	equal(t, "messages of uid-q2", queueMessages(t, s, "uid-q2", 10), []*store.QueueMessage{d})
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.QueueSend([]*store.QueueMessage{msg("uid-q2", "m9", []byte("new"), 0), msg("uid-q2", "m0", []byte("dup"), 0)})
	})
	wantErr(t, "QueueSend of a batch with a taken id", err, store.ErrConflict)
	equal(t, "messages of uid-q2 after the refused batch", queueMessages(t, s, "uid-q2", 10), []*store.QueueMessage{d})
	equal(t, "messages of an unknown queue", queueMessages(t, s, "uid-none", 10), []*store.QueueMessage{})
}

// Usage.QueueBytes counts the bodies of a tenant's messages; deleting the
// queue's resource deletes its messages and their usage.
func testQueueUsage(t *testing.T, s store.Store) {
	q := kv("acme", "prod", "events", "uid-q1")
	create(t, s, q)
	update(t, s, func(tx store.Tx) error {
		return tx.QueueSend([]*store.QueueMessage{msg(q.UID, "m1", []byte("12345"), 0), msg(q.UID, "m2", []byte("1"), 0),
			msg("uid-q2", "m1", []byte("123"), 0)})
	})
	equal(t, "acme queue bytes", usageOf(t, s, "acme").QueueBytes, int64(9))
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(q.UID) })
	equal(t, "messages of the deleted queue", queueMessages(t, s, q.UID, 10), []*store.QueueMessage{})
	equal(t, "acme usage after the queue's delete", usageOf(t, s, "acme"), store.Usage{QueueBytes: 3})
}
