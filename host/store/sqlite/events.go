package sqlite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Queue delivery (store.QueueDelivery) of migration 00011_events.sql,
// fenced by the leases of sqlcore (Core.Fenced), which also holds the cron
// firings and the queue writes both stores spell alike. The one writer
// serializes every Update, so a claim needs no row lock.

// QueueClaim claims up to limit deliverable messages for claim.
func (t *tx) QueueClaim(queue, claim string, now, until time.Time, limit int, fence store.Fence) (_ []*store.QueueMessage, rerr error) {
	if err := t.Fenced(fence); err != nil {
		return nil, err
	}
	rows, err := t.query(qQueueClaimable, queue, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("claim messages of queue %s: %w", queue, err)
	}
	out := []*store.QueueMessage{}
	for rows.Next() {
		m := &store.QueueMessage{Queue: queue, Claim: claim, DeliverableAt: time.UnixMilli(until.UnixMilli()).UTC()}
		var accepted int64
		if err := rows.Scan(&m.Tenant, &m.ID, &m.Body, &accepted, &m.Attempts); err != nil {
			return nil, errors.Join(fmt.Errorf("claim messages of queue %s: %w", queue, err), rows.Close())
		}
		if m.Body == nil {
			m.Body = []byte{}
		}
		m.AcceptedAt = time.UnixMilli(accepted).UTC()
		m.Attempts++
		out = append(out, m)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("claim messages of queue %s: %w", queue, err)
	}
	slices.SortFunc(out, func(a, b *store.QueueMessage) int { return strings.Compare(a.ID, b.ID) })
	for _, m := range out {
		if _, err := t.exec(qQueueClaim, queue, m.ID, claim, until.UnixMilli(), fence.Epoch); err != nil {
			return nil, fmt.Errorf("claim message %s of queue %s: %w", m.ID, queue, err)
		}
	}
	return out, nil
}

// QueueAck deletes the messages ids claim still holds.
func (t *tx) QueueAck(queue, claim string, ids []string, fence store.Fence) (int, error) {
	if err := t.Fenced(fence); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		res, err := t.exec(qQueueAck, queue, id, claim)
		if err != nil {
			return n, fmt.Errorf("acknowledge message %s of queue %s: %w", id, queue, err)
		}
		k, err := affected(res)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// QueueStats reads one queue's figures.
func (t *tx) QueueStats(queue string, now time.Time, max int) (store.QueueStats, error) {
	var st store.QueueStats
	var oldest, next int64
	if err := t.queryRow(qQueueStats, queue).Scan(&st.Depth, &oldest, &next); err != nil {
		return st, fmt.Errorf("read queue %s: %w", queue, err)
	}
	if st.Depth == 0 {
		return st, nil
	}
	st.OldestAccepted, st.NextDeliverable = time.UnixMilli(oldest).UTC(), time.UnixMilli(next).UTC()
	if err := t.queryRow(qQueueDeliverable, queue, now.UnixMilli()).Scan(&st.Deliverable); err != nil {
		return st, fmt.Errorf("read queue %s: %w", queue, err)
	}
	st.Deliverable = min(st.Deliverable, max) // a count through the index; a subquery's LIMIT would scan its result
	return st, nil
}
