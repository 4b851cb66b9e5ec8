package sqlcore

import (
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// Cron firings (store.Firings) and the queue writes (store.QueueDelivery)
// both stores spell alike, fenced by the leases of leases.go
// (spec/runtime-v1.md §10.5), and the queue listing. Sending, claiming,
// acknowledging and the queue's figures stay in each store: PostgreSQL
// sends a batch, claims and acknowledges each with one statement over
// arrays (SKIP LOCKED for the claim) and reads the figures in one round
// trip, where SQLite, which binds no arrays, writes row by row under its
// one writer and counts in two statements (repo decision 0068).

func minuteText(m time.Time) string { return m.UTC().Format(time.RFC3339) }

// RecordFiring inserts f; a recorded (trigger, minute) wraps ErrConflict.
func (c Core) RecordFiring(f *store.Firing, fence store.Fence) error {
	if err := c.Fenced(fence); err != nil {
		return err
	}
	f.Epoch = fence.Epoch
	n, err := c.X.Exec(RecordFiring, bind(f.Trigger, f.Minute.UnixMilli(), f.Tenant, string(f.State), f.Version, f.UpdatedAt.UnixMilli(), f.Epoch))
	switch {
	case err != nil:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, minuteText(f.Minute), err)
	case n == 0:
		return fmt.Errorf("record the firing of %s at %s: %w", f.Trigger, minuteText(f.Minute), store.ErrConflict)
	}
	return nil
}

// Firing reads one firing; ErrNotFound when unrecorded.
func (c Core) Firing(trigger string, minute time.Time) (*store.Firing, error) {
	f := &store.Firing{Trigger: trigger, Minute: time.UnixMilli(minute.UnixMilli()).UTC()}
	var state string
	var updated int64
	if err := c.X.QueryRow(Firing, bind(trigger, minute.UnixMilli())).Scan(&f.Tenant, &state, &f.Version, &updated, &f.Epoch); err != nil {
		return nil, NotFound(err, "the firing of "+trigger+" at "+minuteText(minute))
	}
	f.State, f.UpdatedAt = store.FiringState(state), time.UnixMilli(updated).UTC()
	return f, nil
}

// MoveFiring moves a firing from state from to state to.
func (c Core) MoveFiring(trigger string, minute time.Time, from, to store.FiringState, version string, at time.Time, fence store.Fence) (bool, error) {
	if err := c.Fenced(fence); err != nil {
		return false, err
	}
	n, err := c.X.Exec(MoveFiring, bind(trigger, minute.UnixMilli(), string(from), string(to), version, at.UnixMilli(), fence.Epoch))
	if err != nil {
		return false, fmt.Errorf("move the firing of %s: %w", trigger, err)
	}
	return n == 1, nil
}

// OpenFirings lists open firings of minutes from since.
func (c Core) OpenFirings(since time.Time, limit int) ([]*store.Firing, error) {
	out := []*store.Firing{}
	err := c.X.Query(OpenFirings, func(row sqlrow.Scanner) error {
		f := &store.Firing{}
		var minute, updated int64
		var state string
		if err := row.Scan(&f.Trigger, &minute, &f.Tenant, &state, &f.Version, &updated, &f.Epoch); err != nil {
			return err
		}
		f.Minute, f.State, f.UpdatedAt = time.UnixMilli(minute).UTC(), store.FiringState(state), time.UnixMilli(updated).UTC()
		out = append(out, f)
		return nil
	}, bind(since.UnixMilli(), limit))
	if err != nil {
		return nil, fmt.Errorf("list open firings: %w", err)
	}
	return out, nil
}

// SweepFirings deletes settled firings of minutes before before.
func (c Core) SweepFirings(before time.Time) (int, error) {
	n, err := c.X.Exec(SweepFirings, bind(before.UnixMilli()))
	if err != nil {
		return 0, fmt.Errorf("sweep firings: %w", err)
	}
	return int(n), nil
}

// QueueRelease unclaims one message claim holds.
func (c Core) QueueRelease(queue, claim, id string, deliverableAt time.Time, attempts int, fence store.Fence) (bool, error) {
	if err := c.Fenced(fence); err != nil {
		return false, err
	}
	n, err := c.X.Exec(QueueRelease, bind(queue, id, claim, deliverableAt.UnixMilli(), attempts))
	if err != nil {
		return false, fmt.Errorf("release message %s of queue %s: %w", id, queue, err)
	}
	return n == 1, nil
}

// QueueReleaseClaims unclaims the messages of queue claimed under
// earlier epochs than fence's.
func (c Core) QueueReleaseClaims(queue string, now time.Time, fence store.Fence) (int, error) {
	if err := c.Fenced(fence); err != nil {
		return 0, err
	}
	n, err := c.X.Exec(QueueReleaseClaims, bind(queue, now.UnixMilli(), fence.Epoch))
	if err != nil {
		return 0, fmt.Errorf("release the claims of queue %s: %w", queue, err)
	}
	return int(n), nil
}

// QueueExpire deletes the unclaimed messages accepted before before.
func (c Core) QueueExpire(queue string, before time.Time) (int, error) {
	n, err := c.X.Exec(QueueExpire, bind(queue, before.UnixMilli()))
	if err != nil {
		return 0, fmt.Errorf("expire messages of queue %s: %w", queue, err)
	}
	return int(n), nil
}

// QueueMessages lists up to limit messages of queue by deliverability
// (store.Queue, spec/runtime-v1.md §5.4); instants are Unix milliseconds.
func (c Core) QueueMessages(queue string, limit int) ([]*store.QueueMessage, error) {
	out := []*store.QueueMessage{}
	var at struct{ accepted, deliverable int64 }
	dest := make([]any, 7) // one for every row (Rows), pointing into its message
	err := c.X.Query(QueueMessages, func(row sqlrow.Scanner) error {
		m := &store.QueueMessage{Queue: queue}
		dest[0], dest[1], dest[2], dest[3], dest[4], dest[5], dest[6] = &m.Tenant, &m.ID, &m.Body, &at.accepted, &at.deliverable, &m.Attempts, &m.Claim
		if err := row.Scan(dest...); err != nil {
			return err
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt, m.DeliverableAt = time.UnixMilli(at.accepted).UTC(), time.UnixMilli(at.deliverable).UTC()
		out = append(out, m)
		return nil
	}, bind(queue, limit))
	if err != nil {
		return nil, fmt.Errorf("list messages of queue %s: %w", queue, err)
	}
	return out, nil
}
