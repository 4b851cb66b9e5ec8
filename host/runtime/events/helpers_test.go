package events_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/internal/hosttest"
)

// clock is the test's clock: the dispatcher reads it; the test moves it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testLog writes log lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// world is a host on real SQLite and real workerd whose events dispatcher
// runs on clk (nil: the real clock), and a conformance environment.
type world struct {
	h   *hosttest.Host
	e   *conformance.Env
	m   *events.Metrics
	clk *clock
}

func start(t *testing.T, clk *clock) *world {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	m := events.NewMetrics()
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Events: func(c *events.Config) {
		c.Metrics = m
		if clk != nil {
			c.Now = clk.Now
		}
	}})
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	return &world{h: h, e: e, m: m, clk: clk}
}

// create creates a resource as tenant A's first principal and returns its
// name and UID.
func (w *world) create(t *testing.T, kind, prefix string, spec map[string]any) (string, string) {
	t.Helper()
	r, err := w.e.Create(context.Background(), w.e.A1, kind, w.e.Name(prefix), spec)
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	return r.Metadata.Name, r.Metadata.UID
}

// deploy creates a ModuleWorker running the one-module bundle source with
// handlers, a version and a deployment weighting it 10000; it returns the
// worker's name and the version's UID.
func (w *world) deploy(t *testing.T, source string, handlers ...string) (string, string) {
	t.Helper()
	return w.deployWith(t, source, nil, handlers...)
}

// deployWith is deploy with extra members of the version's spec.
func (w *world) deployWith(t *testing.T, source string, extra map[string]any, handlers ...string) (string, string) {
	t.Helper()
	worker, _ := w.create(t, "ModuleWorker", "worker", map[string]any{})
	digest, err := w.e.UploadBundle(context.Background(), w.e.A1, []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	bundle, _ := w.create(t, "WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	hs := []any{}
	for _, h := range handlers {
		hs = append(hs, h)
	}
	rel := conformance.Rel("ModuleWorker", worker)
	spec := map[string]any{"worker": rel, "bundle": conformance.Rel("WorkerBundle", bundle), "handlers": hs}
	for k, v := range extra {
		spec[k] = v
	}
	version, vuid := w.create(t, "WorkerVersion", "version", spec)
	w.create(t, "WorkerDeployment", "deploy", map[string]any{"worker": rel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", version)}}})
	return worker, vuid
}

// tail streams the worker's tail records into a channel until the test
// ends.
func (w *world) tail(t *testing.T, worker string) <-chan runtime.TailRecord {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := w.h.Runtime.Tail(ctx, "tenant-a", w.e.Space, worker, "")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan runtime.TailRecord, 1024)
	go func() {
		_ = stream(func(r runtime.TailRecord) error {
			ch <- r
			return nil
		})
	}()
	return ch
}

// next is the next tail record of kind kind ("console", "exception"), or
// a failure after 60 s.
func next(t *testing.T, ch <-chan runtime.TailRecord, kind string) runtime.TailRecord {
	t.Helper()
	return nextWithin(t, ch, kind, 60*time.Second)
}

// nextWithin is next with its own bound.
func nextWithin(t *testing.T, ch <-chan runtime.TailRecord, kind string, within time.Duration) runtime.TailRecord {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case r := <-ch:
			if r.Kind == kind {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s tail record within %s", kind, within)
		}
	}
}

// decode reads a console record's message as JSON into v.
func decode(t *testing.T, r runtime.TailRecord, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Message), v); err != nil {
		t.Fatalf("tail record %q is not the handler's JSON: %v", r.Message, err)
	}
}

// eventually polls ok every 50 ms for up to 60 s.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metric is the value of the series of name whose labels include want
// (0 when there is none), as /metrics would show it.
func (w *world) metric(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.m.Collectors()...)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue series
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}
