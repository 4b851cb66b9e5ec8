package events

import (
	"context"
	"errors"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/store"
)

// retryGap is the least time between two dispatches of one trigger's
// minute that reached no handler.
const retryGap = time.Second

// sweepAfter is how long a settled firing is kept: only its own minute
// can fire it again (no catch-up), so an hour is ample for operators.
const sweepAfter = time.Hour

// cron fires every trigger whose schedule matches now's minute and has
// not been settled for it, and settles the open firings of earlier
// minutes (spec/runtime-v1.md §2.5), writing under fence.
func (d *Dispatcher) cron(now time.Time, crons []runtime.CronTrigger, fence store.Fence) {
	minute := now.Truncate(time.Minute)
	retry := d.settleEarlier(minute, crons, fence)
	for _, t := range crons {
		if !d.eligible[t.UID] && !retry[t.UID] {
			continue
		}
		s := d.schedule(t.Cron)
		if s == nil || !s.Matches(minute) || time.Now().Before(d.retryAt[t.UID]) {
			continue
		}
		d.mu.Lock()
		running, busy := d.firing[t.UID]
		decided := d.decided[t.UID].Equal(minute)
		if busy && !running.Equal(minute) && !decided {
			// Rule 5: the previous invocation still runs; this match is
			// skipped, never fired late.
			d.decided[t.UID] = minute
			d.mu.Unlock()
			d.m.firing(t.Worker, "skipped")
			d.log.Warn("cron: a matched minute skipped: the trigger's previous invocation still runs", "trigger", t.Name, "tenant", t.Tenant, "minute", minute, "running", running)
			continue
		}
		if busy || decided {
			d.mu.Unlock()
			continue
		}
		d.firing[t.UID] = minute
		d.mu.Unlock()
		d.retryAt[t.UID] = time.Now().Add(retryGap) // real time: the gap paces the engine, whatever the clock says
		d.work.Add(1)
		go func() {
			defer d.work.Done()
			settled := d.fire(t, minute, fence)
			d.mu.Lock()
			delete(d.firing, t.UID)
			if settled {
				d.decided[t.UID] = minute
			}
			d.mu.Unlock()
		}()
	}
	if now.Sub(d.swept) > sweepAfter/4 {
		d.swept = now
		if err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			_, err := tx.SweepFirings(minute.Add(-sweepAfter))
			return err
		}); err != nil && d.ctx.Err() == nil {
			d.log.Warn("cron: settled firings not swept", "err", err)
		}
	}
}

// boundary notes a minute boundary at now, whether this host holds the
// lease or not: the triggers live at it may fire its minute; one
// appearing later in it waits for the next (no catch-up). The first look
// after a start saw no boundary (the host was down at it) and fires only
// what an earlier run recorded and never dispatched. A replica that
// takes the lease over in a minute whose boundary it lived through fires
// that minute if nobody recorded it (repo decision 0064): the host as a
// whole was up, so the match is not skipped; the record still makes it
// at most once.
func (d *Dispatcher) boundary(now time.Time, crons []runtime.CronTrigger) {
	minute := now.Truncate(time.Minute)
	if minute.Equal(d.minute) {
		return
	}
	first := d.minute.IsZero()
	d.minute, d.eligible = minute, map[string]bool{}
	for _, t := range crons {
		d.eligible[t.UID] = !first
	}
}

// schedule is the parsed cron text, nil when it is not a schedule (the
// host refuses those before storage; a stored one fires never).
func (d *Dispatcher) schedule(text string) *edge.Schedule {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.schedules[text]
	if !ok {
		var err error
		if s, err = edge.ParseCron(text); err != nil {
			d.log.Error("cron: a stored cron is not a schedule; it never fires", "cron", text, "err", err)
			s = nil
		}
		d.schedules[text] = s
	}
	return s
}

// fire records trigger t's firing of minute and dispatches it, and
// reports whether the minute is settled here (false: retry it while the
// minute lasts). The record comes first: a minute recorded by anyone is
// dispatched at most once (spec/runtime-v1.md §2.5 rule 3); a write
// refused for a lapsed epoch settles it here (the lease's holder owns it).
func (d *Dispatcher) fire(t runtime.CronTrigger, minute time.Time, fence store.Fence) bool {
	var state store.FiringState
	var recorded bool
	err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
		f, err := tx.Firing(t.UID, minute)
		if errors.Is(err, store.ErrNotFound) {
			state, recorded = store.FiringRecorded, true
			return tx.RecordFiring(&store.Firing{Trigger: t.UID, Minute: minute, Tenant: t.Tenant, State: store.FiringRecorded, UpdatedAt: d.cfg.Now()}, fence)
		}
		if err != nil {
			return err
		}
		state, recorded = f.State, false
		return nil
	})
	if err == nil && recorded {
		afterRecord(t.UID, minute) // a test-only fault hook (fault.go)
	}
	if d.fenced(err, "firing", fence) {
		return true
	}
	if err != nil {
		if d.ctx.Err() == nil {
			d.log.Error("cron: firing not recorded; not dispatched", "trigger", t.Name, "tenant", t.Tenant, "minute", minute, "err", err)
		}
		return false
	}
	if state != store.FiringRecorded {
		return true // dispatched or settled before (another run of this host)
	}
	version := t.Versions.Draw()
	var moved bool
	err = d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
		var err error
		moved, err = tx.MoveFiring(t.UID, minute, store.FiringRecorded, store.FiringDispatching, version, d.cfg.Now(), fence)
		return err
	})
	if d.fenced(err, "firing", fence) {
		return true
	}
	if err != nil || !moved {
		return err == nil
	}
	outcome, err := d.cfg.Runtime.Scheduled(context.WithoutCancel(d.ctx), t.Tenant, version, minute, t.Cron)
	to := store.FiringOK
	switch {
	case errors.Is(err, runtime.ErrNotReached) || version == "":
		// Rule 4: nothing ran; back to recorded, retried while the minute lasts.
		d.move(t, minute, store.FiringDispatching, store.FiringRecorded, "", fence)
		d.log.Warn("cron: dispatch reached no handler; retrying while the minute lasts", "trigger", t.Name, "tenant", t.Tenant, "minute", minute, "version", version, "err", err)
		return false
	case err != nil:
		to = store.FiringLost
		d.log.Error("cron: the scheduled invocation's outcome is unknown", "trigger", t.Name, "tenant", t.Tenant, "worker", t.Worker.Space+"/"+t.Worker.Name, "version", version, "minute", minute, "err", err)
	case outcome != "ok":
		to = store.FiringFailed
		d.log.Warn("cron: scheduled handler failed", "trigger", t.Name, "tenant", t.Tenant, "worker", t.Worker.Space+"/"+t.Worker.Name, "version", version, "minute", minute, "outcome", outcome)
	}
	if d.move(t, minute, store.FiringDispatching, to, version, fence) {
		d.m.firing(t.Worker, string(to))
	}
	return true
}

// move records a firing's move and reports whether it was recorded; a
// failure is logged (the firing then settles as lost at the minute's
// end, by this host or the lease's new holder).
func (d *Dispatcher) move(t runtime.CronTrigger, minute time.Time, from, to store.FiringState, version string, fence store.Fence) bool {
	err := d.cfg.Store.Update(context.WithoutCancel(d.ctx), func(tx store.Tx) error {
		_, err := tx.MoveFiring(t.UID, minute, from, to, version, d.cfg.Now(), fence)
		return err
	})
	if d.fenced(err, "firing", fence) {
		return false
	}
	if err != nil {
		d.log.Error("cron: firing state not recorded", "trigger", t.Name, "minute", minute, "to", to, "err", err)
		return false
	}
	return true
}

// settleEarlier settles the open firings of minutes before minute that
// no invocation of this dispatcher is running: a recorded one reached no
// handler in its minute (missed), a dispatching one lost its dispatcher
// mid-invocation (lost). It returns the triggers with a firing of minute
// recorded and not dispatched: an earlier run died between the two, and
// the minute is retried while it lasts (spec/runtime-v1.md §2.5 rule 4).
func (d *Dispatcher) settleEarlier(minute time.Time, crons []runtime.CronTrigger, fence store.Fence) map[string]bool {
	retry := map[string]bool{}
	var open []*store.Firing
	err := d.cfg.Store.View(d.ctx, func(tx store.Tx) error {
		var err error
		open, err = tx.OpenFirings(time.Time{}, 1000)
		return err
	})
	if err != nil {
		if d.ctx.Err() == nil {
			d.log.Warn("cron: open firings not read", "err", err)
		}
		return retry
	}
	for _, f := range open {
		if !f.Minute.Before(minute) {
			if f.Minute.Equal(minute) && f.State == store.FiringRecorded {
				retry[f.Trigger] = true
			}
			continue
		}
		d.mu.Lock()
		running := d.firing[f.Trigger].Equal(f.Minute)
		d.mu.Unlock()
		if running {
			continue
		}
		to := store.FiringMissed
		if f.State == store.FiringDispatching {
			to = store.FiringLost
		}
		var moved bool
		err := d.cfg.Store.Update(d.ctx, func(tx store.Tx) error {
			var err error
			moved, err = tx.MoveFiring(f.Trigger, f.Minute, f.State, to, f.Version, d.cfg.Now(), fence)
			return err
		})
		if d.fenced(err, "firing", fence) || err != nil || !moved {
			continue
		}
		w := runtime.Worker{Tenant: f.Tenant}
		for _, t := range crons {
			if t.UID == f.Trigger {
				w = t.Worker
			}
		}
		d.m.firing(w, string(to))
		d.log.Warn("cron: a recorded minute ended without a handler's outcome", "trigger", f.Trigger, "tenant", f.Tenant, "minute", f.Minute, "state", to)
	}
	return retry
}
