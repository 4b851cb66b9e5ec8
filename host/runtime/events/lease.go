package events

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The events lease (spec/runtime-v1.md §10.5; repo decision 0062): the
// loop dispatches only while this host holds store.EventsLease, and every
// firing and claim it writes carries the lease's epoch, so a host whose
// lease lapsed (paused, partitioned) settles nothing.

// DefaultLeaseTTL is how long an acquisition or renewal holds the lease
// (repo decision 0062): a holder renews every third of it, so a stalled
// store or a slow poll costs two renewals before the lease lapses, and a
// replica takes over a dead holder's dispatch within it.
const DefaultLeaseTTL = 15 * time.Second

// defaultHolder names this host in the lease: its host name (distinct
// per replica), "host" when it has none.
func defaultHolder() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "host"
}

// hold keeps the lease at now and returns its fence, ok false when this
// host does not hold it (then nothing is dispatched this round).
func (d *Dispatcher) hold(now time.Time) (store.Fence, bool) {
	ttl := d.cfg.LeaseTTL
	if d.lease.Epoch != 0 && d.lapsed.Swap(false) {
		// A write was refused: another host holds a later epoch.
		d.log.Warn("events: the events lease was taken over; this host dispatches nothing until it holds it again", "holder", d.cfg.Holder, "epoch", d.lease.Epoch)
		d.lose()
	}
	if d.lease.Epoch != 0 {
		if now.Before(d.lease.Expires.Add(-ttl * 2 / 3)) {
			return d.lease.Fence(), true
		}
		var renewed bool
		err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			var err error
			renewed, err = tx.RenewLease(d.cfg.Holder, d.lease.Fence(), now, ttl)
			return err
		})
		switch {
		case err == nil && renewed:
			d.lease.Expires = now.Add(ttl)
			return d.lease.Fence(), true
		case err != nil && now.Before(d.lease.Expires):
			// The store did not answer: held until its deadline, by the
			// epoch's fence whatever happens meanwhile.
			if d.ctx.Err() == nil {
				d.log.Warn("events: lease not renewed; retrying", "epoch", d.lease.Epoch, "expires", d.lease.Expires, "err", err)
			}
			return d.lease.Fence(), true
		}
		d.log.Warn("events: the events lease lapsed; this host dispatches nothing until it holds it again", "holder", d.cfg.Holder, "epoch", d.lease.Epoch, "err", err)
		d.lose()
	}
	if now.Before(d.nextTry) {
		return store.Fence{}, false
	}
	var l store.Lease
	err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
		var err error
		l, err = tx.AcquireLease(store.EventsLease, d.cfg.Holder, now, ttl)
		return err
	})
	if err != nil {
		if d.ctx.Err() == nil {
			d.log.Warn("events: lease not acquired", "err", err)
		}
		d.nextTry = now.Add(ttl / 3)
		return store.Fence{}, false
	}
	if l.Holder != d.cfg.Holder {
		// Another host holds it: look again at a third of the TTL, or at
		// its deadline when sooner.
		d.nextTry = now.Add(ttl / 3)
		if l.Expires.Before(d.nextTry) {
			d.nextTry = l.Expires
		}
		return store.Fence{}, false
	}
	d.lease = l
	d.lapsed.Store(false)
	// A new epoch starts as a start does — a minute found recorded is
	// dispatched while it lasts, one found dispatching becomes lost, and
	// the claims of earlier epochs are released at each queue's first
	// look — except that the current minute fires if this host lived
	// through its boundary (boundary, repo decision 0064).
	d.mu.Lock()
	d.released = map[string]bool{}
	d.mu.Unlock()
	d.m.leaseHeld.Set(1)
	if l.Epoch > 1 {
		d.m.takeovers.Inc()
	}
	d.log.Info("events: the events lease acquired; this host dispatches cron and queues", "holder", l.Holder, "epoch", l.Epoch, "expires", l.Expires)
	return l.Fence(), true
}

// lose forgets the lease.
func (d *Dispatcher) lose() {
	d.lease = store.Lease{}
	d.m.leaseHeld.Set(0)
}

// releaseLease ends this host's epoch at Close, so a replica takes over
// at once rather than after the TTL.
func (d *Dispatcher) releaseLease() {
	if d.lease.Epoch == 0 {
		return
	}
	err := d.cfg.Store.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.ReleaseLease(d.cfg.Holder, d.lease.Fence(), d.cfg.Now())
		return err
	})
	if err != nil {
		d.log.Warn("events: lease not released; a replica takes over at its deadline", "epoch", d.lease.Epoch, "err", err)
	}
	d.lose()
}

// fenced reports whether err is a write refused for a lapsed epoch, and
// counts and logs it.
func (d *Dispatcher) fenced(err error, what string, fence store.Fence) bool {
	if !errors.Is(err, store.ErrFenced) {
		return false
	}
	d.m.fenced.WithLabelValues(what).Inc()
	d.lapsed.Store(true)
	d.log.Warn("events: a write refused: this host's lease epoch is no longer current; the lease's holder redoes it", "write", what, "epoch", fence.Epoch)
	return true
}
