package store

import "time"

// Queue is the part of Tx holding edge.queue messages
// (spec/runtime-v1.md §5.4, §2.6): what producer bindings sent, durable
// until a consumer settles them. Deleting the queue's resource
// (DeleteResource) deletes its messages in the same transaction. Every
// message counts len(Body) bytes toward its tenant's Usage.QueueBytes.
type Queue interface {
	// QueueSend stores msgs; ErrConflict when a (Queue, ID) exists.
	QueueSend(msgs []*QueueMessage) error
	// QueueMessages returns up to limit messages of queue by
	// DeliverableAt, then ID.
	QueueMessages(queue string, limit int) ([]*QueueMessage, error)
	// The delivery of messages to the queue's consumer (events.go).
	QueueDelivery
}

// QueueMessage is one stored edge.queue message. Times are kept to the
// millisecond.
type QueueMessage struct {
	Tenant        string // the queue's tenant
	Queue         string // the AtLeastOnceQueue UID
	ID            string // host-issued, unique in the queue, stable across redeliveries
	Body          []byte // the producer's exact bytes
	AcceptedAt    time.Time
	DeliverableAt time.Time
	Attempts      int    // deliveries so far
	Claim         string // the batch holding it, "" when none (QueueDelivery)
}
