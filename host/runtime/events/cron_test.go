package events_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/store"
)

// scheduledSource logs what its scheduled handler received as JSON.
const scheduledSource = `export default {
  async scheduled(event, env, ctx) {
    console.log(JSON.stringify({ scheduledTime: event.scheduledTime, cron: event.cron, args: arguments.length,
      noRetry: typeof event.noRetry, waitUntil: typeof ctx.waitUntil }));
  },
};
`

// failingSource's scheduled handler throws.
const failingSource = `export default {
  async scheduled(event) {
    throw new RangeError("scheduled boom at " + event.scheduledTime);
  },
};
`

type fired struct {
	ScheduledTime int64  `json:"scheduledTime"`
	Cron          string `json:"cron"`
	Args          int    `json:"args"`
	NoRetry       string `json:"noRetry"`
	WaitUntil     string `json:"waitUntil"`
}

// minute is the test's minute m of 2030-01-07 (a Monday), UTC.
func minute(m int) time.Time { return time.Date(2030, 1, 7, 0, m, 0, 0, time.UTC) }

func (w *world) firing(t *testing.T, trigger string, m time.Time) *store.Firing {
	t.Helper()
	var f *store.Firing
	err := w.h.Store.View(context.Background(), func(tx store.Tx) error {
		var err error
		f, err = tx.Firing(trigger, m)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (w *world) record(t *testing.T, trigger string, m time.Time, state store.FiringState) {
	t.Helper()
	err := w.h.Store.Update(context.Background(), func(tx store.Tx) error {
		return tx.RecordFiring(&store.Firing{Trigger: trigger, Minute: m, Tenant: "tenant-a", State: state, UpdatedAt: m}, store.Fence{})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitLive waits until the data plane's desired state holds trigger.
func (w *world) waitLive(t *testing.T, trigger string) {
	t.Helper()
	eventually(t, "the trigger in desired state", func() bool {
		crons, _ := w.h.Runtime.Events()
		for _, c := range crons {
			if c.UID == trigger {
				return true
			}
		}
		return false
	})
}

// expectFired waits for the next scheduled console record and checks it
// is minute m's, with the trigger's cron, from version.
func expectFired(t *testing.T, w *world, ch <-chan runtime.TailRecord, m time.Time, cron, version string) {
	t.Helper()
	r := next(t, ch, "console")
	var got fired
	decode(t, r, &got)
	if got.ScheduledTime != m.UnixMilli() || got.Cron != cron || got.Args != 3 || got.NoRetry != "function" || got.WaitUntil != "function" {
		t.Fatalf("the handler got %+v, want scheduledTime %d (%s), cron %q, 3 arguments, noRetry and waitUntil functions", got, m.UnixMilli(), m.Format(time.RFC3339), cron)
	}
	if r.Event != "scheduled" || r.VersionUID != version {
		t.Errorf("the record names event %q and version %q, want scheduled and %s", r.Event, r.VersionUID, version)
	}
}

// TestCronFiresEachMatchedMinuteOnce drives a test clock across minutes
// (spec/runtime-v1.md §2.5): a trigger created mid-minute waits for the
// next boundary (no catch-up); each matched minute fires once with
// scheduledTime the minute and cron as stored, unmatched minutes never;
// a minute recorded and never dispatched (a dispatcher died between the
// two) is dispatched while it lasts, one recorded in an earlier minute
// counts as missed, one dispatching when its dispatcher died is never
// sent again and counts as lost; a dispatcher starting mid-minute fires
// only what an earlier run recorded.
func TestCronFiresEachMatchedMinuteOnce(t *testing.T) {
	clk := &clock{now: minute(0).Add(30 * time.Second)}
	w := start(t, clk)
	worker, version := w.deploy(t, scheduledSource, "scheduled")
	const cron = "*/2 * * * *"
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "cron": cron})
	ch := w.tail(t, worker)
	w.waitLive(t, trigger)

	clk.Set(minute(2).Add(500 * time.Millisecond))
	expectFired(t, w, ch, minute(2), cron, version)
	eventually(t, "minute 2 settled ok", func() bool {
		f := w.firing(t, trigger, minute(2))
		return f != nil && f.State == store.FiringOK && f.Version == version
	})
	clk.Set(minute(3).Add(500 * time.Millisecond)) // not a match
	clk.Set(minute(4).Add(500 * time.Millisecond))
	expectFired(t, w, ch, minute(4), cron, version)

	// Minute 5 recorded, never dispatched, and over at minute 6: missed.
	// Minute 6 recorded, never dispatched: dispatched in its minute.
	w.record(t, trigger, minute(5), store.FiringRecorded)
	w.record(t, trigger, minute(6), store.FiringRecorded)
	clk.Set(minute(6).Add(500 * time.Millisecond))
	expectFired(t, w, ch, minute(6), cron, version)
	eventually(t, "minute 5 missed", func() bool { return w.firing(t, trigger, minute(5)).State == store.FiringMissed })
	// Minute 8 dispatching when its dispatcher died: never sent again;
	// lost once over.
	w.record(t, trigger, minute(8), store.FiringDispatching)
	clk.Set(minute(8).Add(500 * time.Millisecond))
	clk.Set(minute(10).Add(500 * time.Millisecond))
	expectFired(t, w, ch, minute(10), cron, version) // the next record: minute 8 never ran
	eventually(t, "minute 8 lost", func() bool { return w.firing(t, trigger, minute(8)).State == store.FiringLost })
	labels := map[string]string{"tenant": "tenant-a", "worker": worker}
	for outcome, want := range map[string]float64{"ok": 4, "missed": 1, "lost": 1, "failed": 0} {
		labels["outcome"] = outcome
		if got := w.metric(t, "takoform_cron_firings_total", labels); got != want && !(outcome == "ok" && got == 3) {
			t.Errorf("takoform_cron_firings_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if f := w.firing(t, trigger, minute(0)); f != nil {
		t.Errorf("minute 0 (the trigger appeared during it) was recorded: %+v", f)
	}

	// A new dispatcher starting mid-minute: minute 12 recorded by a run
	// that died is dispatched; nothing else is (no catch-up).
	w.h.Events.Close()
	w.record(t, trigger, minute(12), store.FiringRecorded)
	clk.Set(minute(12).Add(30 * time.Second))
	startEvents(t, w)
	expectFired(t, w, ch, minute(12), cron, version)
	clk.Set(minute(14).Add(time.Second))
	expectFired(t, w, ch, minute(14), cron, version)
}

// TestCronFailingHandler: a scheduled handler that throws is not retried
// in its minute; the failure is recorded, counted on /metrics and shown
// by the worker's tail with the error's name and message
// (spec/runtime-v1.md §2.1, §2.5 rule 4).
func TestCronFailingHandler(t *testing.T) {
	clk := &clock{now: minute(0).Add(30 * time.Second)}
	w := start(t, clk)
	worker, _ := w.deploy(t, failingSource, "scheduled")
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "cron": "* * * * *"})
	ch := w.tail(t, worker)
	w.waitLive(t, trigger)
	clk.Set(minute(1).Add(500 * time.Millisecond))
	r := next(t, ch, "exception")
	if r.Name != "RangeError" || r.Message != "scheduled boom at "+itoa(minute(1).UnixMilli()) || r.Event != "scheduled" {
		t.Errorf("the tail shows %s %q (event %q), want RangeError %q (scheduled)", r.Name, r.Message, r.Event, "scheduled boom at "+itoa(minute(1).UnixMilli()))
	}
	eventually(t, "minute 1 failed", func() bool {
		f := w.firing(t, trigger, minute(1))
		return f != nil && f.State == store.FiringFailed
	})
	if got := w.metric(t, "takoform_cron_firings_total", map[string]string{"worker": worker, "outcome": "failed"}); got != 1 {
		t.Errorf("failed firings = %v, want 1", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCronOnTheRealClock is the one test that waits for a real minute
// boundary (up to about a minute): on the real clock, "* * * * *" fires at
// the next boundary with scheduledTime that minute, a multiple of 60000
// after the trigger was created, and the minute is recorded ok once.
func TestCronOnTheRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a real minute boundary")
	}
	w := start(t, nil)
	worker, version := w.deploy(t, scheduledSource, "scheduled")
	created := time.Now()
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "cron": "* * * * *"})
	ch := w.tail(t, worker)
	r := nextWithin(t, ch, "console", 150*time.Second)
	var got fired
	decode(t, r, &got)
	m := time.UnixMilli(got.ScheduledTime).UTC()
	if got.ScheduledTime%60000 != 0 || !m.After(created) || got.Cron != "* * * * *" || r.VersionUID != version {
		t.Fatalf("the handler got %+v from version %s, want a minute after %s, cron \"* * * * *\", version %s", got, r.VersionUID, created, version)
	}
	eventually(t, "the minute recorded ok", func() bool {
		f := w.firing(t, trigger, m)
		return f != nil && f.State == store.FiringOK
	})
}

// TestCronDrawsByWeight: each firing draws its version by the
// deployment's weights (spec/runtime-v1.md §9.1 (6)): over 20 minutes of
// a 5000/5000 deployment both versions run (all one version: 2 in 2^20).
func TestCronDrawsByWeight(t *testing.T) {
	clk := &clock{now: minute(0).Add(30 * time.Second)}
	w := start(t, clk)
	worker, _ := w.create(t, "ModuleWorker", "worker", map[string]any{})
	rel := conformance.Rel("ModuleWorker", worker)
	var versions []any
	uids := map[string]bool{}
	for _, label := range []string{"a", "b"} {
		digest, err := w.e.UploadBundle(context.Background(), w.e.A1, []byte(strings.Replace(scheduledSource, "JSON.stringify({", "JSON.stringify({ label: \""+label+"\",", 1)))
		if err != nil {
			t.Fatal(err)
		}
		bundle, _ := w.create(t, "WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
		name, uid := w.create(t, "WorkerVersion", "version", map[string]any{"worker": rel, "bundle": conformance.Rel("WorkerBundle", bundle), "handlers": []any{"scheduled"}})
		versions = append(versions, map[string]any{"weight": 5000, "workerVersion": conformance.Rel("WorkerVersion", name)})
		uids[uid] = false
	}
	w.create(t, "WorkerDeployment", "deploy", map[string]any{"worker": rel, "versions": versions})
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": rel, "cron": "* * * * *"})
	ch := w.tail(t, worker)
	w.waitLive(t, trigger)
	for m := 1; m <= 20; m++ {
		clk.Set(minute(m).Add(500 * time.Millisecond))
		r := next(t, ch, "console")
		var got fired
		decode(t, r, &got)
		if got.ScheduledTime != minute(m).UnixMilli() {
			t.Fatalf("minute %d: the handler got scheduledTime %d, want %d", m, got.ScheduledTime, minute(m).UnixMilli())
		}
		if _, ok := uids[r.VersionUID]; !ok {
			t.Fatalf("minute %d ran version %q, not one the deployment weights", m, r.VersionUID)
		}
		uids[r.VersionUID] = true
	}
	for uid, seen := range uids {
		if !seen {
			t.Errorf("version %s weighted 5000 never ran in 20 firings", uid)
		}
	}
}
