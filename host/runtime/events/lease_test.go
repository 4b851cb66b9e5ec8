package events_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/hosttest"
)

// waitSource's queue handler logs each batch as queueSource does and
// returns normally (every message acknowledged) after 5 s: long enough
// for the lease to change hands while it runs.
const waitSource = `export default {
  async queue(batch) {
    const text = (m) => new TextDecoder().decode(m.body);
    console.log(JSON.stringify({ batchId: batch.batchId, queue: batch.queue,
      messages: batch.messages.map((m) => ({ id: m.id, body: text(m), attempts: m.attempts })) }));
    await new Promise((r) => setTimeout(r, 5000));
  },
};
`

// replica is a second events dispatcher over the world's store and
// engine, as another host sharing the store runs it: its own holder
// name, clock and metrics.
type replica struct {
	d   *events.Dispatcher
	m   *events.Metrics
	clk *clock
}

func (w *world) replica(t *testing.T, holder string, clk *clock) *replica {
	t.Helper()
	r := &replica{m: events.NewMetrics(), clk: clk}
	r.d = events.Start(events.Config{Store: w.h.Store, Runtime: w.h.Runtime, Now: clk.Now, Metrics: r.m, Holder: holder,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	t.Cleanup(r.d.Close)
	return r
}

func (r *replica) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return (&world{m: r.m}).metric(t, name, labels)
}

// step moves every clock to to in steps of 4 s (under a third of the
// lease's TTL), letting the loops poll between steps, as real time
// passing would: a holder whose clock moves renews on the way.
func step(to time.Time, clocks ...*clock) {
	for {
		done := true
		for _, c := range clocks {
			next := c.Now().Add(4 * time.Second)
			if next.After(to) {
				next = to
			}
			if next.Before(to) {
				done = false
			}
			c.Set(next)
		}
		time.Sleep(300 * time.Millisecond)
		if done {
			return
		}
	}
}

func (w *world) lease(t *testing.T) store.Lease {
	t.Helper()
	var l store.Lease
	if err := w.h.Store.View(context.Background(), func(tx store.Tx) error {
		var err error
		l, err = tx.Lease(store.EventsLease)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLeaseOneHolderTakeoverAndFencing runs two dispatchers over one
// store and engine, as two replicas (spec/runtime-v1.md §10.5; repo
// decisions 0060 rule 6, 0062): only the lease's holder fires a minute;
// when the holder pauses (its clock stops: it neither renews nor knows
// its lease lapsed) the other takes over after the TTL with the next
// epoch, releases the claims of the old epoch and delivers their messages
// again, fires the next minute, and the paused holder's late settlement
// and claims are refused; resumed, it finds the lease lost.
// It runs on SQLite and, when TAKOFORM_TEST_POSTGRES names a server
// (scripts/postgres.sh run), on PostgreSQL, where replicas share a store.
func TestLeaseOneHolderTakeoverAndFencing(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testLeaseTakeover(t, "") })
	t.Run("postgres", func(t *testing.T) { pgtest.ServerURL(t); testLeaseTakeover(t, pgtest.URL(t)) })
}

func testLeaseTakeover(t *testing.T, data string) {
	clkA, clkB := &clock{now: minute(0).Add(30 * time.Second)}, &clock{now: minute(0).Add(30 * time.Second)}
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	mA := events.NewMetrics()
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Data: data, Events: func(c *events.Config) {
		c.Metrics, c.Now, c.Holder = mA, clkA.Now, "host-a"
	}})
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, e: e, m: mA, clk: clkA}
	eventually(t, "host-a holds the lease", func() bool { return w.metric(t, "takoform_events_lease_held", nil) == 1 })
	b := w.replica(t, "host-b", clkB)
	if l := w.lease(t); l.Holder != "host-a" || l.Epoch != 1 {
		t.Fatalf("the lease is %+v, want host-a's epoch 1", l)
	}

	worker, version := w.deploy(t, scheduledSource, "scheduled")
	const cron = "* * * * *"
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "cron": cron})
	ch := w.tail(t, worker)
	w.waitLive(t, trigger)
	qworker, _ := w.deployWith(t, waitSource, nil, "queue")
	qname, queue := w.create(t, "AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600})
	w.create(t, "QueueConsumer", "consumer", map[string]any{"queue": conformance.Rel("AtLeastOnceQueue", qname), "worker": conformance.Rel("ModuleWorker", qworker),
		"maxBatchSize": 1, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 0})
	c := consumer{worker: qworker, queue: queue, queueName: qname, tail: w.tail(t, qworker)}

	// Minute 1: both hosts see it; the holder alone fires it.
	step(minute(1).Add(500*time.Millisecond), clkA, clkB)
	expectFired(t, w, ch, minute(1), cron, version)
	eventually(t, "minute 1 settled ok under epoch 1", func() bool {
		f := w.firing(t, trigger, minute(1))
		return f != nil && f.State == store.FiringOK && f.Epoch == 1
	})
	if got := b.metric(t, "takoform_cron_firings_total", nil); got != 0 {
		t.Errorf("host-b settled %v firings without the lease", got)
	}

	// host-a claims a message and, mid-batch, pauses: its clock stops.
	// (A tail record arrives once its invocation ends: the claim in the
	// store says the batch left.)
	ids := w.send(t, queue, "slow")
	eventually(t, "host-a claimed the message", func() bool {
		m := w.messages(t, queue)
		return len(m) == 1 && m[0].Claim != "" && m[0].Attempts == 1
	})
	// host-b's clock goes on past host-a's deadline: it takes over.
	step(minute(1).Add(20*time.Second), clkB)
	eventually(t, "host-b holds the lease", func() bool { return b.metric(t, "takoform_events_lease_held", nil) == 1 })
	if l := w.lease(t); l.Holder != "host-b" || l.Epoch != 2 {
		t.Fatalf("the lease is %+v, want host-b's epoch 2", l)
	}
	if got := b.metric(t, "takoform_events_lease_takeovers_total", nil); got != 1 {
		t.Errorf("host-b's takeovers = %v, want 1", got)
	}
	// The old epoch's claim is released and the message delivered again
	// by host-b; host-a's settlement of its batch is refused.
	var deliveries []string
	for range 2 {
		d := c.batch(t)
		if len(d.Messages) != 1 || d.Messages[0].ID != ids[0] {
			t.Fatalf("a delivery is %+v, want %s alone", d, ids[0])
		}
		deliveries = append(deliveries, d.bodies()...)
	}
	sameBodies(t, "the deliveries (host-a's, then host-b's after the takeover)", deliveries, "slow/1", "slow/2")
	eventually(t, "host-a's settlement refused", func() bool {
		return w.metric(t, "takoform_events_fenced_writes_total", map[string]string{"write": "batch"}) == 1
	})
	w.settled(t, queue) // host-b acknowledged it
	// A message sent now is host-b's; host-a, still paused, learnt from
	// its refused write that its epoch is over.
	ids = w.send(t, queue, "later")
	if got := c.batch(t); len(got.Messages) != 1 || got.Messages[0].ID != ids[0] || got.Messages[0].Attempts != 1 {
		t.Fatalf("the next delivery is %+v, want %s at attempt 1", got, ids[0])
	}
	w.settled(t, queue)
	if got := b.metric(t, "takoform_queue_batches_total", map[string]string{"outcome": "ok"}); got != 2 {
		t.Errorf("host-b's ok batches = %v, want 2", got)
	}

	// Minute 2 is host-b's; host-a resumes, finds its epoch over, and
	// fires nothing.
	step(minute(2).Add(500*time.Millisecond), clkB)
	expectFired(t, w, ch, minute(2), cron, version)
	eventually(t, "minute 2 settled ok under epoch 2", func() bool {
		f := w.firing(t, trigger, minute(2))
		return f != nil && f.State == store.FiringOK && f.Epoch == 2
	})
	if got := w.metric(t, "takoform_events_lease_held", nil); got != 0 {
		t.Errorf("host-a's lease_held = %v after its refused write, want 0", got)
	}
	clkA.Set(clkB.Now())
	step(minute(3).Add(500*time.Millisecond), clkA, clkB)
	expectFired(t, w, ch, minute(3), cron, version) // the next record: minutes 1 and 2 fired once each
	eventually(t, "minute 3 settled ok under epoch 2", func() bool {
		f := w.firing(t, trigger, minute(3))
		return f != nil && f.State == store.FiringOK && f.Epoch == 2
	})
	if got := w.metric(t, "takoform_cron_firings_total", map[string]string{"outcome": "ok"}); got != 1 {
		t.Errorf("host-a settled %v firings, want 1 (minute 1)", got)
	}
	if got := b.metric(t, "takoform_cron_firings_total", map[string]string{"outcome": "ok"}); got != 2 {
		t.Errorf("host-b settled %v firings, want 2 (minutes 2 and 3)", got)
	}
}

// TestLeaseTakeoverFiresTheMinuteItLivedThrough (repo decision 0064):
// the holder stops (its clock with it) at second 50, its lease running
// past the next boundary; the other host, up all along, sees that
// boundary without the lease, takes the lease over when it lapses, and
// fires the minute then — once, under the new epoch — rather than
// skipping it as a host that was down at the boundary would.
func TestLeaseTakeoverFiresTheMinuteItLivedThrough(t *testing.T) {
	clkA, clkB := &clock{now: minute(0).Add(30 * time.Second)}, &clock{now: minute(0).Add(30 * time.Second)}
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	mA := events.NewMetrics()
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Events: func(c *events.Config) {
		c.Metrics, c.Now, c.Holder = mA, clkA.Now, "host-a"
	}})
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, e: e, m: mA, clk: clkA}
	eventually(t, "host-a holds the lease", func() bool { return w.metric(t, "takoform_events_lease_held", nil) == 1 })
	b := w.replica(t, "host-b", clkB)
	worker, version := w.deploy(t, scheduledSource, "scheduled")
	const cron = "* * * * *"
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "cron": cron})
	ch := w.tail(t, worker)
	w.waitLive(t, trigger)

	step(minute(0).Add(50*time.Second), clkA, clkB) // host-a renews on the way, then stops
	step(minute(1).Add(500*time.Millisecond), clkB)
	if l := w.lease(t); l.Holder != "host-a" || !l.Expires.After(minute(1).Add(500*time.Millisecond)) {
		t.Fatalf("at the boundary the lease is %+v, want host-a's, running past it (the boundary inside the takeover gap)", l)
	}
	if f := w.firing(t, trigger, minute(1)); f != nil {
		t.Fatalf("minute 1 recorded before anyone held a live lease: %+v", f)
	}
	step(minute(1).Add(20*time.Second), clkB)
	eventually(t, "host-b holds the lease", func() bool { return b.metric(t, "takoform_events_lease_held", nil) == 1 })
	expectFired(t, w, ch, minute(1), cron, version)
	eventually(t, "minute 1 settled ok under host-b's epoch 2", func() bool {
		f := w.firing(t, trigger, minute(1))
		return f != nil && f.State == store.FiringOK && f.Epoch == 2
	})
	if got := b.metric(t, "takoform_cron_firings_total", map[string]string{"outcome": "ok"}); got != 1 {
		t.Errorf("host-b settled %v firings, want 1 (minute 1)", got)
	}
}
