package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/store"
)

// claimFor is how long a batch holds its messages: the queue handler's
// wall-clock limit (spec/runtime-v1.md §10.3) plus a margin. A batch
// whose dispatcher died leaves its messages deliverable again after it
// (and at once when a host next acquires the events lease, which
// releases the claims of earlier epochs).
const claimFor = 16 * time.Minute

// queueInfo is what a consumer's delivery reads of its queues.
type queueInfo struct {
	name      queueName
	retention time.Duration // messageRetentionSeconds; 0: unknown, nothing expires
	dlq       string        // dead-letter queue UID, "" when none or gone
	dlqDelay  time.Duration // its deliveryDelaySeconds
}

// queues runs one look at every consumer: expiry, the gauges, and as
// many batches as are ready and allowed in flight (spec/runtime-v1.md
// §2.6).
func (d *Dispatcher) queues(now time.Time, consumers []runtime.Consumer, fence store.Fence) {
	for _, c := range consumers {
		if c.Queue == "" {
			continue
		}
		if err := d.consume(now, c, fence); err != nil && !d.fenced(err, "claim", fence) && d.ctx.Err() == nil {
			d.log.Warn("queue: consumer not served this round", "consumer", c.Name, "tenant", c.Tenant, "err", err)
		}
	}
}

func (d *Dispatcher) consume(now time.Time, c runtime.Consumer, fence store.Fence) error {
	var qi queueInfo
	var st store.QueueStats
	expired, released := 0, 0
	d.mu.Lock()
	stale := !d.released[c.Queue]
	d.mu.Unlock()
	if stale {
		// The claims of earlier epochs are nobody's now: their holder
		// died or lost the lease, and its settlement would be refused.
		if err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			var err error
			released, err = tx.QueueReleaseClaims(c.Queue, now, fence)
			return err
		}); err != nil {
			return err
		}
	}
	// A look is a read; it writes only to expire what is due.
	look := func(tx store.Tx) error {
		var err error
		if qi, err = readQueue(tx, c); err != nil {
			return err
		}
		st, err = tx.QueueStats(c.Queue, now, c.MaxBatchSize)
		return err
	}
	if err := d.cfg.Store.View(d.ctx, look); err != nil {
		return err
	}
	if qi.retention > 0 && st.Depth > 0 && st.OldestAccepted.Before(now.Add(-qi.retention)) {
		if err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			var err error
			if expired, err = tx.QueueExpire(c.Queue, now.Add(-qi.retention)); err != nil {
				return err
			}
			return look(tx)
		}); err != nil {
			return err
		}
	}
	if stale {
		d.mu.Lock()
		d.released[c.Queue] = true
		d.mu.Unlock()
		if released > 0 {
			d.log.Info("queue: claims of batches of an earlier lease epoch released", "queue", qi.name.name, "tenant", c.Tenant, "messages", released)
		}
	}
	if expired > 0 {
		d.m.dropped.WithLabelValues(qi.name.labels("expired")...).Add(float64(expired))
		d.log.Warn("queue: messages expired undelivered", "queue", qi.name.name, "tenant", c.Tenant, "messages", expired)
	}
	d.m.depth.WithLabelValues(qi.name.labels()...).Set(float64(st.Depth))
	age := 0.0
	if st.Depth > 0 {
		age = max(0, now.Sub(st.OldestAccepted).Seconds())
	}
	d.m.oldest.WithLabelValues(qi.name.labels()...).Set(age)
	if st.Deliverable == 0 || time.Now().Before(d.backoff(c.UID)) {
		return nil
	}
	// A batch leaves once maxBatchSize are deliverable, or once the
	// oldest deliverable message has waited maxBatchTimeoutSeconds.
	if st.Deliverable < c.MaxBatchSize && now.Sub(st.NextDeliverable) < c.MaxBatchTimeout {
		return nil
	}
	for {
		d.mu.Lock()
		full := d.inFlight[c.UID] >= c.MaxConcurrency
		if !full {
			d.inFlight[c.UID]++
		}
		d.mu.Unlock()
		if full {
			return nil
		}
		claim, err := newID("batch_")
		if err != nil {
			d.release(c)
			return err
		}
		var msgs []*store.QueueMessage
		err = d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			var err error
			msgs, err = tx.QueueClaim(c.Queue, claim, now, now.Add(claimFor), c.MaxBatchSize, fence)
			return err
		})
		if err != nil || len(msgs) == 0 {
			d.release(c)
			return err
		}
		d.work.Add(1)
		go func() {
			defer d.work.Done()
			defer d.release(c)
			d.deliver(c, qi, claim, msgs, fence)
		}()
		if len(msgs) < c.MaxBatchSize {
			return nil // the rest waits for its own batch's size or timeout
		}
	}
}

// backoff is when consumer uid may be tried again after a batch that
// reached no handler.
func (d *Dispatcher) backoff(uid string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rest[uid]
}

func (d *Dispatcher) release(c runtime.Consumer) {
	d.mu.Lock()
	d.inFlight[c.UID]--
	d.mu.Unlock()
}

// readQueue reads the name and retention of c's queue and its dead-letter
// queue's delay.
func readQueue(tx store.Tx, c runtime.Consumer) (queueInfo, error) {
	var qi queueInfo
	q, err := tx.ResourceByUID(c.Queue)
	if err != nil {
		return qi, err
	}
	qi.name = queueName{tenant: q.Tenant, space: q.Space, name: q.Name}
	var spec struct {
		Retention int64 `json:"messageRetentionSeconds"`
	}
	if err := json.Unmarshal(q.Spec, &spec); err != nil {
		return qi, err
	}
	qi.retention = time.Duration(spec.Retention) * time.Second
	if c.DeadLetterQueue == "" {
		return qi, nil
	}
	dl, err := tx.ResourceByUID(c.DeadLetterQueue)
	if errors.Is(err, store.ErrNotFound) {
		return qi, nil // gone: exhausted messages are dropped
	}
	if err != nil {
		return qi, err
	}
	var dspec struct {
		Delay int64 `json:"deliveryDelaySeconds"`
	}
	if err := json.Unmarshal(dl.Spec, &dspec); err != nil {
		return qi, err
	}
	qi.dlq, qi.dlqDelay = dl.UID, time.Duration(dspec.Delay)*time.Second
	return qi, nil
}

// deliver hands one claimed batch to a version drawn by the consumer
// worker's weights and settles it by the handler's outcome under fence.
func (d *Dispatcher) deliver(c runtime.Consumer, qi queueInfo, claim string, msgs []*store.QueueMessage, fence store.Fence) {
	version := c.Versions.Draw()
	var res *runtime.QueueResult
	err := runtime.ErrNotReached
	if version != "" {
		res, err = d.cfg.Runtime.Queue(context.WithoutCancel(d.ctx), c.Tenant, version, qi.name.name, msgs)
	}
	now := d.cfg.Now()
	if errors.Is(err, runtime.ErrNotReached) {
		// Never reached: deliverable again, attempts unchanged; the
		// consumer rests a second (real time) before the next try.
		d.mu.Lock()
		d.rest[c.UID] = time.Now().Add(retryGap)
		d.mu.Unlock()
		d.m.batches.WithLabelValues(qi.name.labels("unreached")...).Inc()
		d.log.Warn("queue: batch reached no handler; its messages are deliverable again", "consumer", c.Name, "tenant", c.Tenant, "version", version, "err", err)
		if err := d.cfg.Store.Update(context.WithoutCancel(d.ctx), func(tx store.Tx) error {
			for _, m := range msgs {
				if _, err := tx.QueueRelease(c.Queue, claim, m.ID, now, m.Attempts-1, fence); err != nil {
					return err
				}
			}
			return nil
		}); err != nil && !d.fenced(err, "batch", fence) {
			d.log.Error("queue: a batch's claims not released; they lapse at their deadline", "consumer", c.Name, "err", err)
		}
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "unknown"
		res = &runtime.QueueResult{Outcome: "unknown"} // settles as a throw: every message retried
		d.log.Error("queue: the batch's dispatch broke off; its unsettled messages are retried", "consumer", c.Name, "tenant", c.Tenant, "version", version, "err", err)
	} else if res.Outcome != "ok" {
		outcome = "failed"
		d.log.Warn("queue: queue handler failed; its unacknowledged messages are retried", "consumer", c.Name, "tenant", c.Tenant,
			"worker", c.Worker.Space+"/"+c.Worker.Name, "version", version, "outcome", res.Outcome)
	}
	d.m.batches.WithLabelValues(qi.name.labels(outcome)...).Inc()
	d.m.deliveries.WithLabelValues(qi.name.labels()...).Add(float64(len(msgs)))
	d.settle(c, qi, claim, msgs, res, outcome == "ok", now, fence)
}

// settle applies a batch's settlements in one transaction
// (spec/runtime-v1.md §2.6): acknowledged messages are removed; retried
// ones come back after their delay with their attempts, unless exhausted
// (to the dead-letter queue as new messages, or dropped) or expired
// (dropped); unsettled ones count as acknowledged when the handler
// returned normally and as retried when it did not.
func (d *Dispatcher) settle(c runtime.Consumer, qi queueInfo, claim string, msgs []*store.QueueMessage, res *runtime.QueueResult, ok bool, now time.Time, fence store.Fence) {
	acked := map[string]bool{}
	for _, id := range res.ExplicitAcks {
		acked[id] = true
	}
	retry := map[string]time.Duration{}
	for _, r := range res.RetryMessages {
		if !acked[r.ID] {
			retry[r.ID] = delayOr(r.DelaySeconds, c.RetryDelay)
		}
	}
	var acks []string
	for _, m := range msgs {
		_, retried := retry[m.ID]
		switch {
		case acked[m.ID]:
			acks = append(acks, m.ID)
		case retried:
		case res.RetryBatch.Retry:
			retry[m.ID] = delayOr(res.RetryBatch.DelaySeconds, c.RetryDelay)
		case res.AckAll || ok:
			acks = append(acks, m.ID)
		default:
			retry[m.ID] = c.RetryDelay
		}
	}
	var retried, dead, exhausted, expired int
	err := d.cfg.Store.Update(context.WithoutCancel(d.ctx), func(tx store.Tx) error {
		retried, dead, exhausted, expired = 0, 0, 0, 0
		if _, err := tx.QueueAck(c.Queue, claim, acks, fence); err != nil {
			return err
		}
		var letters []*store.QueueMessage
		var drop []string
		for _, m := range msgs {
			delay, ok := retry[m.ID]
			if !ok {
				continue
			}
			switch {
			case qi.retention > 0 && !m.AcceptedAt.Add(qi.retention).After(now):
				expired++
				drop = append(drop, m.ID)
			case m.Attempts >= 1+c.MaxRetries && qi.dlq != "":
				id, err := newID("msg_")
				if err != nil {
					return err
				}
				dead++
				drop = append(drop, m.ID)
				letters = append(letters, &store.QueueMessage{Tenant: m.Tenant, Queue: qi.dlq, ID: id, Body: m.Body,
					AcceptedAt: now.Truncate(time.Millisecond), DeliverableAt: now.Add(qi.dlqDelay).Truncate(time.Millisecond)})
			case m.Attempts >= 1+c.MaxRetries:
				exhausted++
				drop = append(drop, m.ID)
			default:
				retried++
				if _, err := tx.QueueRelease(c.Queue, claim, m.ID, now.Add(delay), m.Attempts, fence); err != nil {
					return err
				}
			}
		}
		if _, err := tx.QueueAck(c.Queue, claim, drop, fence); err != nil {
			return err
		}
		if len(letters) > 0 {
			return tx.QueueSend(letters)
		}
		return nil
	})
	if d.fenced(err, "batch", fence) {
		return
	}
	if err != nil {
		d.log.Error("queue: a batch's settlement not recorded; its messages are delivered again after their claim lapses", "consumer", c.Name, "tenant", c.Tenant, "err", err)
		return
	}
	d.m.retries.WithLabelValues(qi.name.labels()...).Add(float64(retried))
	d.m.dead.WithLabelValues(qi.name.labels()...).Add(float64(dead))
	d.m.dropped.WithLabelValues(qi.name.labels("exhausted")...).Add(float64(exhausted))
	d.m.dropped.WithLabelValues(qi.name.labels("expired")...).Add(float64(expired))
	if exhausted > 0 {
		d.log.Warn("queue: exhausted messages dropped (the consumer has no dead-letter queue)", "consumer", c.Name, "tenant", c.Tenant, "messages", exhausted)
	}
	if dead > 0 {
		d.Wake()
	}
}

func delayOr(s *int, def time.Duration) time.Duration {
	if s == nil {
		return def
	}
	return time.Duration(*s) * time.Second
}

func newID(prefix string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b), nil
}
