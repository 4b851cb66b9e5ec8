package store

import "time"

// The delivery state of cron firings and queue batches
// (spec/runtime-v1.md §2.5, §2.6; repo decision 0060): every decision the
// events dispatcher takes is recorded here before it acts, so a
// dispatcher that dies leaves a state the next one resumes from; every
// write carries the Fence of the events lease (lease.go, repo decision
// 0062), so a dispatcher whose lease lapsed settles nothing.

// FiringState is where one cron firing stands.
type FiringState string

// The states of a firing. Recorded and dispatching are open: the minute
// is not settled yet.
const (
	// FiringRecorded: the firing is recorded, no dispatch is under way; a
	// dispatcher may (re)dispatch it until its minute ends.
	FiringRecorded FiringState = "recorded"
	// FiringDispatching: a dispatch was sent to the engine and its answer
	// is not recorded; it is never sent again (at most one invocation per
	// trigger and minute).
	FiringDispatching FiringState = "dispatching"
	// FiringOK: the handler ran and returned normally.
	FiringOK FiringState = "ok"
	// FiringFailed: the handler ran and threw or rejected.
	FiringFailed FiringState = "failed"
	// FiringMissed: recorded, but no dispatch reached a handler before the
	// minute ended.
	FiringMissed FiringState = "missed"
	// FiringLost: dispatched, but the dispatcher died before the answer
	// was recorded; whether the handler finished is unknown.
	FiringLost FiringState = "lost"
)

// Open reports whether the firing's minute is not settled yet.
func (s FiringState) Open() bool { return s == FiringRecorded || s == FiringDispatching }

// Firing is one (WorkerCronTrigger UID, matched minute): the unique key
// that makes a minute fire at most once across restarts.
type Firing struct {
	Trigger   string    // the WorkerCronTrigger UID
	Minute    time.Time // the matched minute, UTC, second 0 (stored to the millisecond)
	Tenant    string
	State     FiringState
	Version   string    // the WorkerVersion UID drawn, "" before dispatch
	UpdatedAt time.Time // to the millisecond
	Epoch     int64     // the lease epoch of the last write (RecordFiring, MoveFiring)
}

// Firings is the part of Tx holding cron firings. Deleting a trigger's
// resource (DeleteResource) deletes its firings in the same transaction.
type Firings interface {
	// RecordFiring inserts f with Epoch fence.Epoch; ErrConflict when
	// (Trigger, Minute) is recorded already, ErrFenced when fence is not
	// current.
	RecordFiring(f *Firing, fence Fence) error
	// Firing reads the firing of trigger at minute; ErrNotFound.
	Firing(trigger string, minute time.Time) (*Firing, error)
	// MoveFiring sets the firing's state, version, UpdatedAt and Epoch
	// (fence.Epoch) only if it is in state from, and reports whether it
	// was (false when it is in another state or absent); ErrFenced when
	// fence is not current.
	MoveFiring(trigger string, minute time.Time, from, to FiringState, version string, at time.Time, fence Fence) (bool, error)
	// OpenFirings lists up to limit open firings (FiringState.Open) of
	// minutes at or after since, by Minute then Trigger.
	OpenFirings(since time.Time, limit int) ([]*Firing, error)
	// SweepFirings deletes settled firings of minutes before before and
	// returns how many.
	SweepFirings(before time.Time) (int, error)
}

// QueueStats is what the dispatcher and /metrics read of one queue.
type QueueStats struct {
	Depth int // messages stored, in flight included
	// Deliverable counts unclaimed messages deliverable at the instant
	// asked, up to the cap asked.
	Deliverable int
	// OldestAccepted is the earliest AcceptedAt; zero when empty.
	OldestAccepted time.Time
	// NextDeliverable is the earliest DeliverableAt (a claimed message's
	// is its claim's deadline); zero when empty.
	NextDeliverable time.Time
}

// QueueDelivery is the part of Queue a consumer's dispatcher uses
// (spec/runtime-v1.md §2.6). A claimed message belongs to one batch: its
// Claim is the batch id and its DeliverableAt the claim's deadline, after
// which it is deliverable again should its batch never settle. A claim
// carries the epoch of the fence it was taken under; every write below
// but QueueExpire is ErrFenced when its fence is not current.
type QueueDelivery interface {
	// QueueClaim claims up to limit unclaimed messages of queue
	// deliverable at now (DeliverableAt <= now), by DeliverableAt then
	// ID, for batch claim until until: each gets Claim = claim,
	// DeliverableAt = until and Attempts + 1 under fence, and is returned
	// so, by ID.
	QueueClaim(queue, claim string, now, until time.Time, limit int, fence Fence) ([]*QueueMessage, error)
	// QueueAck deletes the messages ids of queue still claimed by claim
	// and returns how many.
	QueueAck(queue, claim string, ids []string, fence Fence) (int, error)
	// QueueRelease unclaims message id of queue if claim still holds it,
	// deliverable at deliverableAt with attempts; false when claim does
	// not hold it.
	QueueRelease(queue, claim, id string, deliverableAt time.Time, attempts int, fence Fence) (bool, error)
	// QueueReleaseClaims unclaims every message of queue claimed under
	// an epoch before fence.Epoch (their batches' dispatcher lost the
	// lease or died), deliverable at now with their attempts, and returns
	// how many.
	QueueReleaseClaims(queue string, now time.Time, fence Fence) (int, error)
	// QueueExpire deletes the unclaimed messages of queue accepted before
	// before and returns how many.
	QueueExpire(queue string, before time.Time) (int, error)
	// QueueStats reads queue's depth, oldest message, next deliverable
	// instant and, up to max, how many are deliverable at now.
	QueueStats(queue string, now time.Time, max int) (QueueStats, error)
}
