package replicatest_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/wire"
)

// queueBenchSource sends ?n= messages with one sendBatch (/send) and
// acknowledges every batch it is given whole; GET / answers "ready".
const queueBenchSource = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/send") {
      const n = Number(url.searchParams.get("n"));
      await env.Q.sendBatch(Array.from({ length: n }, () => ({ body: "message" })));
      return new Response("sent");
    }
    return new Response("ready");
  },
  async queue(batch) { batch.acknowledgeAll(); },
};
`

// The shape of the queue load, as BenchmarkQueueEndToEnd's on SQLite
// (internal/runtimebench): requests of queueSendBatch messages from
// queueSenders clients; batches of queueSendBatch, queueInFlight in
// flight.
const (
	queueSendBatch = 100
	queueSenders   = 4
	queueInFlight  = 4
)

// queueFigure is one measured path's rounds: messages per second and the
// CPU spent per message.
type queueFigure struct {
	name  string
	short string // in the ratio lines
	rates []float64
	cpu   []cpuSample // per message: see perMessage
}

func (f *queueFigure) add(n int, elapsed time.Duration, used cpuSample) {
	f.rates = append(f.rates, float64(n)/elapsed.Seconds())
	f.cpu = append(f.cpu, used)
}

// queueBench is one setup (1 or 2 replicas) of BenchmarkDataPlaneQueue.
type queueBench struct {
	*plane
	st       *postgres.Store // the cluster's database, opened by the benchmark
	n        int
	consumer string // the consuming worker's endpoint hostname
	producer string // the worker sending to the queue without a consumer
	consumed string // the consumed queue's UID
}

// BenchmarkDataPlaneQueue measures queue messages per second end to end
// (spec/runtime-v1.md §2.6) on PostgreSQL with one `host serve` replica
// and with two on one database, the shape of BenchmarkQueueEndToEnd's on
// SQLite (internal/runtimebench): a worker sends BENCH_RUNTIME_QUEUE_N
// messages (default 2000) with sendBatch, 100 a request from 4 clients
// spread over the replicas' ingresses, and a QueueConsumer (batches of
// 100, 4 in flight, no batch timeout) delivers them to the same worker's
// queue handler, which acknowledges each batch whole; the time runs from
// the first send to the queue's depth reaching 0. The events dispatcher
// runs on the lease holder only (repo decision 0062), so with two
// replicas one delivers what both accepted. Two floors in the same run:
// the same sends to a queue with no consumer (storing alone), and the
// store's own delivery transactions on the same database with no host and
// no workerd (100-message QueueSend from 4 goroutines while one claims
// batches of 100, 4 in flight, each acknowledged whole under a lease
// fence, until all are). BENCH_RUNTIME_ROUNDS rounds (default 3), order rotated;
// CPU per message of the hosts, their workerd, PostgreSQL and this
// process (clients, and the store floor's store).
func BenchmarkDataPlaneQueue(b *testing.B) {
	n := benchEnvInt(b, "BENCH_RUNTIME_QUEUE_N", 2000)
	rounds := benchEnvInt(b, "BENCH_RUNTIME_ROUNDS", 3)
	requirePlane(b)
	fmt.Printf("\n== queue messages per second end to end on PostgreSQL (send → queue handler → acknowledged), %d messages a round, %d rounds\n", n, rounds)
	fmt.Printf("   load average (1 5 15 min) at start: %s\n", loadavg())
	b.ResetTimer()
	for _, replicas := range []int{1, 2} {
		q := startQueueBench(b, replicas, n)
		rest := q.atRest(3 * time.Second)
		figures := q.run(rounds)
		holder := q.holder()
		q.c.Stop()
		q.st.Close()
		fmt.Printf("   postgres ×%d (%s), load average now %s\n", replicas, holder, loadavg())
		fmt.Printf("     at rest before the rounds, CPU ms per second: host %.0f, workerd %.0f, postgres %.0f\n", rest.host, rest.engine, rest.pg)
		fmt.Printf("     %-50s %9s  %-22s %s\n", "", "median/s", "per round", "CPU µs/message: host  workerd  postgres  bench")
		for _, f := range figures {
			c := perMessage(f.cpu, n)
			fmt.Printf("     %-50s %9.0f  %-22s %24.0f %8.0f %9.0f %6.0f\n", f.name, medianOf(f.rates), joinFloats(f.rates, "%.0f"), c.host, c.engine, c.pg, c.client)
		}
		for _, f := range figures[1:] {
			var per []float64
			for i := range f.rates {
				per = append(per, figures[0].rates[i]/f.rates[i])
			}
			fmt.Printf("     end to end / %-35s %.2f× (per round %s)\n", f.short, medianOf(per), joinFloats(per, "%.2f"))
		}
		b.ReportMetric(medianOf(figures[0].rates), fmt.Sprintf("msgs/s-x%d", replicas))
	}
	b.StopTimer()
	fmt.Printf("   load average at end: %s\n", loadavg())
}

// perMessage is the median over rounds of each party's CPU, in µs per
// message (of n a round).
func perMessage(used []cpuSample, n int) struct{ host, engine, pg, client float64 } {
	var host, engine, pg, client []float64
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	for _, u := range used {
		host, engine, pg, client = append(host, per(u.host)), append(engine, per(u.engine)), append(pg, per(u.pg)), append(client, per(u.client))
	}
	return struct{ host, engine, pg, client float64 }{medianOf(host), medianOf(engine), medianOf(pg), medianOf(client)}
}

func startQueueBench(b *testing.B, replicas, n int) *queueBench {
	p := startPlane(b, replicas)
	st, err := postgres.Open(p.ctx, p.c.Data(), postgres.Options{MaxConns: 2 * queueSenders})
	if err != nil {
		b.Fatal(err)
	}
	q := &queueBench{plane: p, st: st, n: n}
	queue := func() *wire.Resource {
		return p.create("AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600, "deliveryDelaySeconds": 0})
	}
	consumed, stored := queue(), queue()
	producer := func(queue *wire.Resource) (string, string) {
		return p.deploy(queueBenchSource, []any{"fetch", "queue"},
			map[string]any{"queueProducerBindings": []any{map[string]any{"name": "Q", "resource": p.e.Rel("AtLeastOnceQueue", queue.Metadata.Name)}}})
	}
	worker, consumer := producer(consumed)
	_, q.producer = producer(stored)
	q.consumer, q.consumed = consumer, consumed.Metadata.UID
	p.create("QueueConsumer", "consumer", map[string]any{"worker": p.e.Rel("ModuleWorker", worker), "queue": p.e.Rel("AtLeastOnceQueue", consumed.Metadata.Name),
		"maxBatchSize": queueSendBatch, "maxBatchTimeoutSeconds": 0, "maxConcurrency": queueInFlight, "maxRetries": 3, "retryDelaySeconds": 0})
	// warm up: the consumer starts a new workerd generation with the
	// dispatch worker on each replica; deliver a first batch through it
	q.drain(queueSendBatch)
	return q
}

// atRest is the CPU the hosts, their workerd and PostgreSQL spend per
// second of d with nothing sent (leases, polls, reconciles), in ms.
func (q *queueBench) atRest(d time.Duration) struct{ host, engine, pg float64 } {
	cpu0, t0 := q.cpu.sample(), time.Now()
	time.Sleep(d)
	used, secs := q.cpu.sample().minus(cpu0), time.Since(t0).Seconds()
	ms := func(x time.Duration) float64 { return float64(x.Milliseconds()) / secs }
	return struct{ host, engine, pg float64 }{ms(used.host), ms(used.engine), ms(used.pg)}
}

// holder names the replica that holds the events lease (it dispatches).
func (q *queueBench) holder() string {
	var l store.Lease
	if err := q.st.View(q.ctx, func(tx store.Tx) error {
		var err error
		l, err = tx.Lease(store.EventsLease)
		return err
	}); err != nil {
		return "events lease: " + err.Error()
	}
	for i, r := range q.c.Replicas {
		if strings.Contains(l.Holder, strings.TrimPrefix(r.URL, "http://")) {
			return fmt.Sprintf("the dispatcher on replica %d of %d", i, len(q.c.Replicas))
		}
	}
	return "the events lease held by " + l.Holder
}

// sendAll sends n messages through hostname's worker, queueSendBatch a
// request from queueSenders clients, client g through replica g mod N.
func (q *queueBench) sendAll(hostname string, n int) {
	next := make(chan int, n/queueSendBatch+1)
	for i := 0; i < n; i += queueSendBatch {
		next <- min(queueSendBatch, n-i)
	}
	close(next)
	var wg sync.WaitGroup
	var once sync.Once
	for g := range queueSenders {
		wg.Go(func() {
			for k := range next {
				status, body, err := q.get(g%len(q.ingress), hostname, "/send?n="+strconv.Itoa(k))
				if err == nil && (status != 200 || body != "sent") {
					err = fmt.Errorf("/send through replica %d answered %d %q", g%len(q.ingress), status, body)
				}
				if err != nil {
					once.Do(func() { q.b.Error(err) })
					return
				}
			}
		})
	}
	wg.Wait()
	if q.b.Failed() {
		q.b.FailNow()
	}
}

// empty reports whether the consumed queue holds no message: one
// message's index lookup (QueueMessages with limit 1), not a count, so
// polling it every 10 ms costs PostgreSQL next to nothing.
func (q *queueBench) empty() bool {
	var msgs []*store.QueueMessage
	if err := q.st.View(q.ctx, func(tx store.Tx) error {
		var err error
		msgs, err = tx.QueueMessages(q.consumed, 1)
		return err
	}); err != nil {
		q.b.Fatal(err)
	}
	return len(msgs) == 0
}

// left is how many messages the consumed queue holds (for a failure).
func (q *queueBench) left() int {
	var st store.QueueStats
	if err := q.st.View(q.ctx, func(tx store.Tx) error {
		var err error
		st, err = tx.QueueStats(q.consumed, time.Now(), 0)
		return err
	}); err != nil {
		q.b.Fatal(err)
	}
	return st.Depth
}

// drain sends n messages to the consumed queue and returns when its depth
// is 0 (polled every 10 ms).
func (q *queueBench) drain(n int) {
	q.sendAll(q.consumer, n)
	deadline := time.Now().Add(5 * time.Minute)
	for !q.empty() {
		if time.Now().After(deadline) {
			q.b.Fatalf("the consumer left %d of %d messages after 5 minutes:\n%s", q.left(), n, q.c.Logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run measures rounds of the three paths, order rotated.
func (q *queueBench) run(rounds int) []*queueFigure {
	e2e := &queueFigure{name: "send → handler → acknowledged"}
	sendOnly := &queueFigure{name: "floor: send and store only (no consumer)", short: "sends alone"}
	storeOnly := &queueFigure{name: "floor: store send/claim/ack, no host (in process)", short: "the store alone"}
	timed := func(f *queueFigure, work func()) func() {
		return func() {
			cpu0, t0 := q.cpu.sample(), time.Now()
			work()
			f.add(q.n, time.Since(t0), q.cpu.sample().minus(cpu0))
		}
	}
	paths := []func(){
		timed(e2e, func() { q.drain(q.n) }),
		timed(sendOnly, func() { q.sendAll(q.producer, q.n) }),
		nil,
	}
	for round := range rounds {
		paths[2] = timed(storeOnly, func() { q.storeFloor(round) })
		for k := range paths {
			paths[(k+round)%len(paths)]()
		}
	}
	return []*queueFigure{e2e, sendOnly, storeOnly}
}

// storeFloor runs the store's delivery transactions for n messages of a
// queue no consumer has, on the cluster's database: queueSenders
// goroutines each QueueSend queueSendBatch messages a transaction, while
// one goroutine QueueClaims up to queueSendBatch whenever fewer than
// queueInFlight batches are in flight, as the dispatcher does, and each
// batch's own goroutine QueueAcks them in a second transaction, under the fence of a lease of their own
// (the events dispatcher's writes are fenced likewise), until every
// message is acknowledged.
func (q *queueBench) storeFloor(round int) {
	queue := fmt.Sprintf("floor-queue-%d-%d", len(q.c.Replicas), round)
	var lease store.Lease
	if err := q.st.Update(q.ctx, func(tx store.Tx) error {
		var err error
		lease, err = tx.AcquireLease("bench-floor", "bench", time.Now(), time.Hour)
		return err
	}); err != nil {
		q.b.Fatal(err)
	}
	fence := lease.Fence()
	batches := make(chan int, q.n/queueSendBatch+1)
	for i := 0; i < q.n; i += queueSendBatch {
		batches <- i
	}
	close(batches)
	var acked atomic.Int64
	var claims atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	fail := func(err error) { once.Do(func() { q.b.Error(err) }) }
	for range queueSenders {
		wg.Go(func() {
			for first := range batches {
				now := time.Now()
				var msgs []*store.QueueMessage
				for i := first; i < min(first+queueSendBatch, q.n); i++ {
					msgs = append(msgs, &store.QueueMessage{Tenant: "tenant-a", Queue: queue, ID: fmt.Sprintf("m%06d", i), Body: []byte("message"), AcceptedAt: now, DeliverableAt: now})
				}
				if err := q.st.Update(q.ctx, func(tx store.Tx) error { return tx.QueueSend(msgs) }); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	// One claimer, as the dispatcher's consumer loop: a claim whenever
	// fewer than queueInFlight batches are in flight, each batch
	// acknowledged by its own goroutine.
	slots := make(chan struct{}, queueInFlight)
	for acked.Load() < int64(q.n) && !q.b.Failed() {
		slots <- struct{}{}
		claim := "floor-batch-" + strconv.FormatInt(claims.Add(1), 10)
		var msgs []*store.QueueMessage
		now := time.Now()
		if err := q.st.Update(q.ctx, func(tx store.Tx) error {
			var err error
			msgs, err = tx.QueueClaim(queue, claim, now, now.Add(time.Hour), queueSendBatch, fence)
			return err
		}); err != nil {
			fail(err)
			break
		}
		if len(msgs) == 0 {
			<-slots
			time.Sleep(time.Millisecond)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			ids := make([]string, len(msgs))
			for i, m := range msgs {
				ids[i] = m.ID
			}
			var k int
			if err := q.st.Update(q.ctx, func(tx store.Tx) error {
				var err error
				k, err = tx.QueueAck(queue, claim, ids, fence)
				return err
			}); err != nil {
				fail(err)
				return
			}
			if k != len(ids) {
				fail(errors.New("the store floor acknowledged " + strconv.Itoa(k) + " of " + strconv.Itoa(len(ids)) + " claimed messages"))
				return
			}
			acked.Add(int64(k))
		})
	}
	wg.Wait()
	if q.b.Failed() {
		q.b.FailNow()
	}
}
