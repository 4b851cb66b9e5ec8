// Package events is the host's events dispatcher (spec/runtime-v1.md
// §2.5, §2.6; repo decision 0060): one loop, run by the host holding the
// events lease (lease.go, repo decision 0062), that fires each live
// WorkerCronTrigger's scheduled handler at its matched minutes and
// delivers each QueueConsumer's queue in batches to its queue handler,
// through the data plane (package runtime). Every decision is recorded in
// the store before it acts (store.Firings, store.QueueDelivery), so a
// dispatcher that dies leaves a state the next one resumes from; the
// loop's clock is injected, so tests drive minutes and delays without
// waiting for them.
package events

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/store"
)

// Config configures a Dispatcher.
type Config struct {
	Store   store.Store
	Runtime *runtime.Runtime
	// Now is the dispatcher's clock (default time.Now): the minutes it
	// matches, the delays and timeouts it keeps.
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics counts firings and deliveries (nil: a fresh set, not
	// registered anywhere).
	Metrics *Metrics
	// Poll is how often the loop looks at the clock, the triggers and the
	// queues (default 200 ms): dispatch follows a minute boundary or a
	// deliverable message within one poll (spec/runtime-v1.md §2.5 rule 6,
	// §2.6).
	Poll time.Duration
	// Holder names this host in the events lease (default: its host
	// name); replicas sharing a store need distinct names (repo decision
	// 0062).
	Holder string
	// LeaseTTL is how long an acquisition or renewal of the lease holds
	// (default DefaultLeaseTTL); it is renewed every third of it.
	LeaseTTL time.Duration
}

// Dispatcher is the running events loop of one host.
type Dispatcher struct {
	cfg    Config
	log    *slog.Logger
	m      *Metrics
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
	work   sync.WaitGroup // firings and batches in flight

	mu        sync.Mutex
	schedules map[string]*edge.Schedule // by cron text; nil value: not a schedule
	firing    map[string]time.Time      // trigger UID → the minute whose invocation runs
	decided   map[string]time.Time      // trigger UID → the last minute settled here
	inFlight  map[string]int            // consumer UID → batches in flight
	released  map[string]bool           // queue UIDs whose stale claims were released
	rest      map[string]time.Time      // consumer UID → no batch before (real time): its last reached no handler
	swept     time.Time                 // the last sweep of settled firings

	// The loop's own: the minute it last looked at (held the lease or
	// not), the triggers live at its boundary, and when a minute that
	// reached no handler is tried again, by trigger UID.
	minute   time.Time
	eligible map[string]bool
	retryAt  map[string]time.Time
	// The events lease this host holds (zero Epoch: none), and when the
	// loop may try to acquire it again.
	lease   store.Lease
	nextTry time.Time
	lapsed  atomic.Bool // a write was refused for its epoch (any goroutine sets it)
}

// Start starts the loop; Close stops it.
func Start(cfg Config) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.Holder == "" {
		cfg.Holder = defaultHolder()
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{cfg: cfg, log: cfg.Logger, m: cfg.Metrics, ctx: ctx, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1),
		schedules: map[string]*edge.Schedule{}, firing: map[string]time.Time{}, decided: map[string]time.Time{},
		inFlight: map[string]int{}, released: map[string]bool{}, rest: map[string]time.Time{}, retryAt: map[string]time.Time{}}
	go d.loop()
	return d
}

// Wake asks for a look at the queues now (a send made a message
// deliverable); cheap and non-blocking.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for the firings and batches in flight;
// their handlers' outcomes are recorded as they end.
func (d *Dispatcher) Close() {
	d.cancel()
	<-d.done
	d.work.Wait()
	d.releaseLease()
}

func (d *Dispatcher) loop() {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		now := d.cfg.Now().UTC()
		crons, consumers := d.cfg.Runtime.Events()
		d.boundary(now, crons) // held or not: a replica that lived at a boundary may fire its minute on taking over
		if fence, ok := d.hold(now); ok {
			d.cron(now, crons, fence)
			d.queues(now, consumers, fence)
		}
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}
