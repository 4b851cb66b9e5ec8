package runtimebench_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// eventsSource sends ?n= messages with one sendBatch (/send), answers the
// KV value of ?k= (/get), acknowledges every batch it is given, and
// records each scheduled invocation's minute → the isolate's clock
// (Date.now(), milliseconds) in KV.
const eventsSource = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/send") {
      const n = Number(url.searchParams.get("n"));
      await env.Q.sendBatch(Array.from({ length: n }, () => ({ body: "message" })));
      return new Response("sent");
    }
    if (url.pathname === "/get") {
      const v = await env.KV.get(url.searchParams.get("k"));
      return v === null ? new Response("absent", { status: 404 }) : new Response(v);
    }
    return new Response("hello world\n");
  },
  async queue(batch) { batch.acknowledgeAll(); },
  async scheduled(event, env) { await env.KV.put("fired:" + event.scheduledTime, String(Date.now())); },
};
`

// eventsWorker deploys eventsSource binding KV and producing to q (its
// handlers fetch, queue and scheduled) and returns it with its endpoint.
func (r *rig) eventsWorker(q, kv *wire.Resource) *worker {
	r.b.Helper()
	w := r.newWorker()
	digest, err := r.e.UploadBundle(r.ctx, r.e.A1, []byte(eventsSource))
	if err != nil {
		r.b.Fatal(err)
	}
	bundle := r.create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	v := r.create("WorkerVersion", "version", map[string]any{"worker": w.rel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name),
		"handlers":              []any{"fetch", "queue", "scheduled"},
		"kvBindings":            []any{map[string]any{"name": "KV", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
		"queueProducerBindings": []any{map[string]any{"name": "Q", "resource": conformance.Rel("AtLeastOnceQueue", q.Metadata.Name)}}})
	w.deployment = r.create("WorkerDeployment", "deploy", deploymentSpec(w, v))
	r.endpoint(w)
	r.waitAnswer(w.hostname, "/", helloBody, 50*time.Millisecond)
	return w
}

// depth is how many messages queue holds (in flight included).
func (r *rig) depth(queue string) int {
	var st store.QueueStats
	if err := r.h.Store.View(r.ctx, func(tx store.Tx) error {
		var err error
		st, err = tx.QueueStats(queue, time.Now(), 0)
		return err
	}); err != nil {
		r.b.Fatal(err)
	}
	return st.Depth
}

// sendAll sends n messages through w in requests of batch, from 4 clients.
func (r *rig) sendAll(w *worker, n, batch int) {
	var wg sync.WaitGroup
	errs := make(chan error, n/batch+1)
	next := make(chan int, n/batch+1)
	for i := 0; i < n; i += batch {
		next <- min(batch, n-i)
	}
	close(next)
	for range 4 {
		wg.Go(func() {
			for k := range next {
				s, body, err := get(r.hc, r.front.URL, w.hostname, "/send?n="+strconv.Itoa(k))
				if err == nil && (s != 200 || body != "sent") {
					err = fmt.Errorf("/send answered %d %q", s, body)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.b.Fatal(err)
	}
}

// BenchmarkQueueEndToEnd measures queue messages per second end to end on
// a host on a real SQLite file (spec/runtime-v1.md §2.6): a worker sends
// BENCH_RUNTIME_QUEUE_N messages (default 2000) with sendBatch, 100 a
// request from 4 clients, and a QueueConsumer (batches of 100, 4 in
// flight, no batch timeout) delivers them to the same worker's queue
// handler, which acknowledges each batch whole; the time runs from the
// first send to the queue's depth reaching 0. The floor, in the same run:
// the same sends to a queue with no consumer (storing the messages
// alone). BENCH_RUNTIME_ROUNDS rounds (default 3), order alternated.
func BenchmarkQueueEndToEnd(b *testing.B) {
	n := envInt(b, "BENCH_RUNTIME_QUEUE_N", 2000)
	rounds := envInt(b, "BENCH_RUNTIME_ROUNDS", 3)
	r := startRig(b)
	kv := r.create("EdgeKVNamespace", "kv", map[string]any{})
	queue := func() *wire.Resource {
		return r.create("AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0})
	}
	consumed, stored := queue(), queue()
	wc, ws := r.eventsWorker(consumed, kv), r.eventsWorker(stored, kv)
	r.create("QueueConsumer", "consumer", map[string]any{"worker": wc.rel, "queue": conformance.Rel("AtLeastOnceQueue", consumed.Metadata.Name),
		"maxBatchSize": 100, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 4, "maxRetries": 3, "retryDelaySeconds": 0})
	var e2e, floor []float64
	drain := func(n int) time.Time {
		r.sendAll(wc, n, 100)
		deadline := time.Now().Add(5 * time.Minute)
		for r.depth(consumed.Metadata.UID) > 0 {
			if time.Now().After(deadline) {
				b.Fatalf("the consumer left %d of %d messages after 5 minutes", r.depth(consumed.Metadata.UID), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Now()
	}
	endToEnd := func() {
		t0 := time.Now()
		e2e = append(e2e, float64(n)/drain(n).Sub(t0).Seconds())
	}
	// warm up: the consumer's shard starts its dispatch worker (a new
	// workerd generation) and delivers a first batch
	drain(100)
	storeOnly := func() {
		t0 := time.Now()
		r.sendAll(ws, n, 100)
		floor = append(floor, float64(n)/time.Since(t0).Seconds())
	}
	header(fmt.Sprintf("queue messages per second end to end (send → queue handler → acknowledged), %d messages a round, %d rounds", n, rounds))
	b.ResetTimer()
	for round := range rounds {
		if round%2 == 0 {
			endToEnd()
			storeOnly()
		} else {
			storeOnly()
			endToEnd()
		}
	}
	b.StopTimer()
	fmt.Printf("   %-52s %12s\n", "per round (messages/s)", "median")
	fmt.Printf("   %-52s %12.0f   per round %s\n", "send → handler → acknowledged", median(e2e), fmtRatios(e2e))
	fmt.Printf("   %-52s %12.0f   per round %s\n", "floor: send and store only (no consumer)", median(floor), fmtRatios(floor))
	fmt.Printf("   load average at end: %s\n", loadavg())
}

// speed is how many dispatcher minutes pass in one real minute in
// BenchmarkCronDelay (a minute every two seconds).
const speed = 30

// BenchmarkCronDelay measures how long after its matched minute a cron
// trigger's scheduled handler starts (spec/runtime-v1.md §2.5): the
// events dispatcher runs on a clock where a minute passes every two real
// seconds, the trigger is "* * * * *", and the handler records the
// isolate's Date.now() for each scheduledTime; a delay is that instant
// minus the real instant of the minute's start on the dispatcher's clock.
// BENCH_RUNTIME_CRON_MINUTES minutes (default 30). The floor, in the same
// run: a fetch through the ingress to the same worker (what invoking it
// costs), and the dispatcher's poll interval (how late it may notice a
// minute).
func BenchmarkCronDelay(b *testing.B) {
	minutes := envInt(b, "BENCH_RUNTIME_CRON_MINUTES", 30)
	start := time.Now().Truncate(time.Minute)
	real0 := time.Now()
	virtual := func() time.Time { return start.Add(time.Since(real0) * speed) }
	realOf := func(v time.Time) time.Time { return real0.Add(v.Sub(start) / speed) }
	r := startRig(b, func(o *hosttest.Options) { o.Events = func(c *events.Config) { c.Now = virtual } })
	kv := r.create("EdgeKVNamespace", "kv", map[string]any{})
	q := r.create("AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0})
	w := r.eventsWorker(q, kv)
	first := virtual().Truncate(time.Minute).Add(2 * time.Minute)
	r.create("WorkerCronTrigger", "cron", map[string]any{"worker": w.rel, "cron": "* * * * *"})
	header(fmt.Sprintf("cron firing delay after the matched minute, %d minutes at %d× (a minute every %s)", minutes, speed, time.Minute/speed))
	b.ResetTimer()
	var fetches []time.Duration
	last := first.Add(time.Duration(minutes-1) * time.Minute)
	for !virtual().After(last.Add(time.Minute)) {
		t0 := time.Now()
		s, body, err := get(r.hc, r.front.URL, w.hostname, "/")
		if err != nil || s != 200 || body != helloBody {
			b.Fatalf("the fetch floor answered %d %q %v", s, body, err)
		}
		fetches = append(fetches, time.Since(t0))
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	var delays []time.Duration
	missing := 0
	for m := first; !m.After(last); m = m.Add(time.Minute) {
		s, body, err := get(r.hc, r.front.URL, w.hostname, "/get?k=fired:"+strconv.FormatInt(m.UnixMilli(), 10))
		if err != nil {
			b.Fatal(err)
		}
		if s == 404 {
			missing++
			continue
		}
		at, err := strconv.ParseInt(body, 10, 64)
		if s != 200 || err != nil {
			b.Fatalf("/get of minute %s answered %d %q", m, s, body)
		}
		delays = append(delays, time.UnixMilli(at).Sub(realOf(m)))
	}
	slices.Sort(delays)
	slices.Sort(fetches)
	d, f := sample{lat: delays}, sample{lat: fetches}
	fmt.Printf("   %-44s %10s %10s %10s\n", "", "p50", "p99", "max")
	fmt.Printf("   %-44s %10s %10s %10s   (%d minutes fired, %d not)\n", "matched minute → scheduled handler starts", ms(d.pct(0.5)), ms(d.pct(0.99)), ms(d.pct(1)), len(delays), missing)
	fmt.Printf("   %-44s %10s %10s %10s\n", "floor: a fetch through the ingress", ms(f.pct(0.5)), ms(f.pct(0.99)), ms(f.pct(1)))
	fmt.Printf("   %-44s %10s\n", "floor: the dispatcher's poll interval", ms(200*time.Millisecond))
	fmt.Printf("   load average at end: %s\n", loadavg())
	if missing > 0 {
		b.Errorf("%d of %d matched minutes never reached the handler", missing, minutes)
	}
}
