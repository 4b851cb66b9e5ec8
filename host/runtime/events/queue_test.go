package events_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/host/store"
)

// queueSource's queue handler logs each batch as JSON, then settles each
// message as its body says: "ack", "retry", "retry-N" (delaySeconds N),
// "none" (left unsettled), "sleep" (400 ms, unsettled); a body "throw" makes the handler throw after
// settling the others, "ackAll" and "retryAll" settle the rest of the
// batch, and "check" tries the settlement errors (spec/runtime-v1.md
// §2.6) and logs their names.
const queueSource = `export default {
  async queue(batch, env, ctx) {
    const text = (m) => new TextDecoder().decode(m.body);
    console.log(JSON.stringify({
      batchId: batch.batchId, queue: batch.queue, frozen: Object.isFrozen(batch.messages),
      messages: batch.messages.map((m) => ({ id: m.id, body: text(m), attempts: m.attempts, ts: m.timestampMillis,
        date: m.timestamp instanceof Date && m.timestamp.getTime() === m.timestampMillis, buffer: m.body instanceof ArrayBuffer })),
    }));
    let fail = false;
    for (const m of batch.messages) {
      const b = text(m);
      if (b === "ack") batch.acknowledge(m.id);
      else if (b === "retry") batch.retry(m.id);
      else if (b.startsWith("retry-")) m.retry({ delaySeconds: Number(b.slice(6)) });
      else if (b === "throw") fail = true;
      else if (b === "sleep") await new Promise((r) => setTimeout(r, 400));
      else if (b === "ackAll") batch.ackAll();
      else if (b === "retryAll") batch.retryAll();
      else if (b === "check") {
        const errs = [];
        const name = (f) => { try { f(); return "none"; } catch (e) { return e.name; } };
        batch.acknowledge(m.id);
        errs.push(name(() => batch.acknowledge(m.id)), name(() => m.retry()), name(() => batch.retry("msg_nope")),
          name(() => batch.acknowledge(m.id, { delaySeconds: -1 })));
        ctx.waitUntil(new Promise((r) => setTimeout(r, 20)).then(() => {
          console.log(JSON.stringify({ late: name(() => batch.acknowledgeAll()) }));
        }));
        console.log(JSON.stringify({ errors: errs }));
      }
    }
    if (fail) throw new Error("queue boom");
  },
};
`

type delivered struct {
	BatchID  string `json:"batchId"`
	Queue    string `json:"queue"`
	Frozen   bool   `json:"frozen"`
	Messages []struct {
		ID       string `json:"id"`
		Body     string `json:"body"`
		Attempts int    `json:"attempts"`
		TS       int64  `json:"ts"`
		Date     bool   `json:"date"`
		Buffer   bool   `json:"buffer"`
	} `json:"messages"`
}

// bodies is the batch's bodies with attempts, sorted: "ack/1".
func (d delivered) bodies() []string {
	var out []string
	for _, m := range d.Messages {
		out = append(out, m.Body+"/"+itoa(int64(m.Attempts)))
	}
	slices.Sort(out)
	return out
}

// consumer is a deployed queue consumer: its queue's UID and name, its
// dead-letter queue's UID ("" without one) and its worker's tail.
type consumer struct {
	worker                string
	queue, queueName, dlq string
	tail                  <-chan runtime.TailRecord
}

// consume deploys queueSource as the consumer of a new queue (retention
// s) with settings, and a dead-letter queue when dlq.
func (w *world) consume(t *testing.T, retention int, dlq bool, settings map[string]any) consumer {
	t.Helper()
	return w.consumeWith(t, retention, dlq, settings, nil)
}

// consumeWith is consume with extra members of the version's spec.
func (w *world) consumeWith(t *testing.T, retention int, dlq bool, settings, extra map[string]any) consumer {
	t.Helper()
	worker, _ := w.deployWith(t, queueSource, extra, "queue")
	var c consumer
	c.worker = worker
	c.queueName, c.queue = w.create(t, "AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": retention})
	spec := map[string]any{"queue": conformance.Rel("AtLeastOnceQueue", c.queueName), "worker": conformance.Rel("ModuleWorker", worker)}
	for k, v := range settings {
		spec[k] = v
	}
	if dlq {
		var name string
		name, c.dlq = w.create(t, "AtLeastOnceQueue", "dead", map[string]any{"messageRetentionSeconds": 3600})
		spec["deadLetterQueue"] = conformance.Rel("AtLeastOnceQueue", name)
	}
	_, uid := w.create(t, "QueueConsumer", "consumer", spec)
	c.tail = w.tail(t, worker)
	eventually(t, "the consumer in desired state", func() bool {
		_, cs := w.h.Runtime.Events()
		for _, x := range cs {
			if x.UID == uid {
				return true
			}
		}
		return false
	})
	return c
}

// send stores messages with the given bodies as the producer binding
// does (accepted and deliverable at the clock's now) and returns their ids.
func (w *world) send(t *testing.T, queue string, bodies ...string) []string {
	t.Helper()
	now := w.clk.Now().Truncate(time.Millisecond)
	var msgs []*store.QueueMessage
	var ids []string
	for _, b := range bodies {
		id := "msg_" + strings.ReplaceAll(w.e.Name("m"), " ", "")
		ids = append(ids, id)
		msgs = append(msgs, &store.QueueMessage{Tenant: "tenant-a", Queue: queue, ID: id, Body: []byte(b), AcceptedAt: now, DeliverableAt: now})
	}
	if err := w.h.Store.Update(context.Background(), func(tx store.Tx) error { return tx.QueueSend(msgs) }); err != nil {
		t.Fatal(err)
	}
	return ids
}

// messages is what queue holds now.
func (w *world) messages(t *testing.T, queue string) []*store.QueueMessage {
	t.Helper()
	var out []*store.QueueMessage
	if err := w.h.Store.View(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.QueueMessages(queue, 1000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// startEvents starts a new dispatcher on w's host (the test's clock and
// metrics), stopped when the test ends.
func startEvents(t *testing.T, w *world) *events.Dispatcher {
	d := events.Start(events.Config{Store: w.h.Store, Runtime: w.h.Runtime, Now: w.clk.Now, Metrics: w.m})
	t.Cleanup(d.Close)
	return d
}

// batch is the next batch the consumer's handler logged.
func (c consumer) batch(t *testing.T) delivered {
	t.Helper()
	for {
		r := next(t, c.tail, "console")
		if strings.HasPrefix(r.Message, `{"batchId"`) {
			var d delivered
			decode(t, r, &d)
			return d
		}
	}
}

// settled waits until queue holds exactly want (bodies with attempts,
// unclaimed) and returns the messages.
func (w *world) settled(t *testing.T, queue string, want ...string) []*store.QueueMessage {
	t.Helper()
	slices.Sort(want)
	var got []string
	var msgs []*store.QueueMessage
	eventually(t, "queue holds "+strings.Join(want, ","), func() bool {
		msgs = w.messages(t, queue)
		got = got[:0]
		for _, m := range msgs {
			if m.Claim != "" {
				return false
			}
			got = append(got, string(m.Body)+"/"+itoa(int64(m.Attempts)))
		}
		slices.Sort(got)
		return slices.Equal(got, want)
	})
	return msgs
}

func sameBodies(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestQueueBatchSizeTimeoutAndSettlements (spec/runtime-v1.md §2.6): a
// batch leaves once maxBatchSize messages are deliverable, or fewer once
// the oldest waited maxBatchTimeoutSeconds; the handler gets the batch's
// queue name, frozen messages with ids, bytes, attempts and timestamps;
// per-message acknowledge and retry (with and without delaySeconds) and
// unsettled messages on a normal return are applied; a retry is
// deliverable after its delay with attempts + 1; the settlement errors
// are thrown by name.
func TestQueueBatchSizeTimeoutAndSettlements(t *testing.T) {
	clk := &clock{now: minute(0)}
	w := start(t, clk)
	c := w.consume(t, 3600, false, map[string]any{"maxBatchSize": 4, "maxBatchTimeoutSeconds": 10, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 30})

	// Three messages wait for the timeout; a fourth fills the batch at
	// once, and the unsettled one is acknowledged on the normal return.
	w.send(t, c.queue, "ack", "retry", "retry-5")
	time.Sleep(300 * time.Millisecond) // a poll or so: nothing may leave yet
	for _, m := range w.messages(t, c.queue) {
		if m.Claim != "" {
			t.Fatalf("a batch of 3 left before the timeout: %+v", m)
		}
	}
	w.send(t, c.queue, "none")
	b := c.batch(t)
	sameBodies(t, "the full batch", b.bodies(), "ack/1", "retry/1", "retry-5/1", "none/1")
	if b.Queue != c.queueName || !b.Frozen || b.BatchID == "" {
		t.Errorf("batch queue %q frozen %v id %q, want %q, frozen, an id", b.Queue, b.Frozen, b.BatchID, c.queueName)
	}
	for _, m := range b.Messages {
		if !strings.HasPrefix(m.ID, "msg_") || m.TS != minute(0).UnixMilli() || !m.Date || !m.Buffer {
			t.Errorf("message %+v: want its id, timestampMillis %d, a Date timestamp and an ArrayBuffer body", m, minute(0).UnixMilli())
		}
	}
	msgs := w.settled(t, c.queue, "retry/1", "retry-5/1")
	for _, m := range msgs {
		want := minute(0).Add(30 * time.Second)
		if string(m.Body) == "retry-5" {
			want = minute(0).Add(5 * time.Second)
		}
		if !m.DeliverableAt.Equal(want) {
			t.Errorf("%s deliverable at %s, want %s (its delay)", m.Body, m.DeliverableAt, want)
		}
	}
	// At +5 s only retry-5 is deliverable; it waits for the timeout (10 s
	// after it became deliverable), then goes alone with attempts 2.
	clk.Set(minute(0).Add(5 * time.Second))
	time.Sleep(300 * time.Millisecond)
	clk.Set(minute(0).Add(15 * time.Second))
	b = c.batch(t)
	sameBodies(t, "the timed-out batch", b.bodies(), "retry-5/2")
	w.settled(t, c.queue, "retry/1", "retry-5/2") // retried again, 5 s on

	// The settlement errors; three deliverable, the oldest waited past
	// the timeout: they go together.
	clk.Set(minute(1))
	w.send(t, c.queue, "check")
	b = c.batch(t)
	sameBodies(t, "the check batch", b.bodies(), "check/1", "retry/2", "retry-5/3")
	var errs struct {
		Errors []string `json:"errors"`
	}
	decode(t, next(t, c.tail, "console"), &errs)
	if !slices.Equal(errs.Errors, []string{"already_settled", "already_settled", "unknown_message", "already_settled"}) {
		t.Errorf("settlement errors %v, want already_settled, already_settled, unknown_message, already_settled", errs.Errors)
	}
	var late struct {
		Late string `json:"late"`
	}
	decode(t, next(t, c.tail, "console"), &late)
	if late.Late != "unknown_batch" {
		t.Errorf("a settlement after the handler settled threw %q, want unknown_batch", late.Late)
	}
	w.settled(t, c.queue, "retry/2", "retry-5/3")
	if got := w.metric(t, "takoform_queue_deliveries_total", map[string]string{"queue": c.queueName}); got != 8 {
		t.Errorf("deliveries = %v, want 8", got)
	}
	if got := w.metric(t, "takoform_queue_retries_total", map[string]string{"queue": c.queueName}); got != 5 {
		t.Errorf("retries = %v, want 5", got)
	}
	eventually(t, "depth 2 on the gauge", func() bool { return w.metric(t, "takoform_queue_depth", map[string]string{"queue": c.queueName}) == 2 })
	// The host's own /metrics carries them.
	resp, err := http.Get(w.h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`takoform_queue_depth{queue="` + c.queueName + `"`, `takoform_queue_deliveries_total{queue="` + c.queueName + `"`,
		`takoform_queue_retries_total{queue="` + c.queueName + `"`, `takoform_queue_oldest_message_age_seconds{queue="` + c.queueName + `"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("/metrics has no %s…", want)
		}
	}
	age := w.metric(t, "takoform_queue_oldest_message_age_seconds", map[string]string{"queue": c.queueName})
	if age != 60 { // the clock stands at minute 1; both were accepted at minute 0
		t.Errorf("oldest message age = %v s, want 60", age)
	}
}

// TestQueueThrowRetriesDeadLettersAndDrops (spec/runtime-v1.md §2.6): a
// throw retries only the messages not acknowledged, after
// retryDelaySeconds with attempts + 1; acknowledgeAll before a throw
// keeps the batch removed; retryAll returns the batch; a message failing
// its 1 + maxRetries-th delivery moves to the dead-letter queue as a new
// message with the same bytes, or is dropped and counted without one;
// unacknowledged messages expire after messageRetentionSeconds.
func TestQueueThrowRetriesDeadLettersAndDrops(t *testing.T) {
	clk := &clock{now: minute(0)}
	w := start(t, clk)
	c := w.consume(t, 3600, true, map[string]any{"maxBatchSize": 10, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 1, "maxRetries": 1, "retryDelaySeconds": 10})

	w.send(t, c.queue, "ack", "throw")
	sameBodies(t, "the throwing batch", c.batch(t).bodies(), "ack/1", "throw/1")
	if x := next(t, c.tail, "exception"); x.Name != "Error" || x.Message != "queue boom" || x.Event != "queue" {
		t.Errorf("the tail shows %s %q (event %q), want Error \"queue boom\" (queue)", x.Name, x.Message, x.Event)
	}
	msgs := w.settled(t, c.queue, "throw/1")
	if want := minute(0).Add(10 * time.Second); !msgs[0].DeliverableAt.Equal(want) {
		t.Errorf("the retried message is deliverable at %s, want %s (retryDelaySeconds)", msgs[0].DeliverableAt, want)
	}
	clk.Set(minute(0).Add(10 * time.Second))
	sameBodies(t, "the redelivery", c.batch(t).bodies(), "throw/2")
	w.settled(t, c.queue)
	dead := w.settled(t, c.dlq, "throw/0")
	if dead[0].ID == msgs[0].ID || !dead[0].AcceptedAt.Equal(clk.Now()) || !dead[0].DeliverableAt.Equal(clk.Now()) {
		t.Errorf("the dead letter %+v: want a new id, accepted and deliverable now (%s)", dead[0], clk.Now())
	}
	q := map[string]string{"queue": c.queueName}
	if got := w.metric(t, "takoform_queue_dead_letters_total", q); got != 1 {
		t.Errorf("dead letters = %v, want 1", got)
	}
	if got := w.metric(t, "takoform_queue_batches_total", map[string]string{"queue": c.queueName, "outcome": "failed"}); got != 2 {
		t.Errorf("failed batches = %v, want 2", got)
	}

	w.send(t, c.queue, "ackAll", "throw")
	sameBodies(t, "acknowledgeAll, then a throw", c.batch(t).bodies(), "ackAll/1", "throw/1")
	w.settled(t, c.queue)
	w.send(t, c.queue, "retryAll", "x")
	sameBodies(t, "retryAll", c.batch(t).bodies(), "retryAll/1", "x/1")
	w.settled(t, c.queue, "retryAll/1", "x/1")

	// Without a dead-letter queue an exhausted message is dropped and
	// counted; an undelivered one expires after the retention.
	d := w.consume(t, 60, false, map[string]any{"maxBatchSize": 10, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 1, "maxRetries": 0, "retryDelaySeconds": 30})
	w.send(t, d.queue, "retry")
	sameBodies(t, "the only delivery", d.batch(t).bodies(), "retry/1")
	w.settled(t, d.queue)
	dq := map[string]string{"queue": d.queueName, "reason": "exhausted"}
	if got := w.metric(t, "takoform_queue_dropped_total", dq); got != 1 {
		t.Errorf("exhausted drops = %v, want 1", got)
	}
	w.h.Events.Close() // nothing delivers: the next message waits past its retention
	w.send(t, d.queue, "late")
	clk.Add(61 * time.Second)
	startEvents(t, w)
	w.settled(t, d.queue)
	dq["reason"] = "expired"
	eventually(t, "the expired drop counted", func() bool { return w.metric(t, "takoform_queue_dropped_total", dq) == 1 })
}

// TestQueueConcurrencyAndRestart: at most maxConcurrency batches of a
// consumer are in flight, each message in one; a batch claimed by a run
// that died is delivered again when the dispatcher starts (at least
// once), with attempts counting that delivery.
func TestQueueConcurrencyAndRestart(t *testing.T) {
	clk := &clock{now: minute(0)}
	w := start(t, clk)
	c := w.consume(t, 3600, false, map[string]any{"maxBatchSize": 1, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 2, "maxRetries": 3, "retryDelaySeconds": 0})
	w.send(t, c.queue, "sleep", "sleep", "sleep", "sleep", "sleep")
	most := 0
	eventually(t, "every message delivered", func() bool {
		msgs := w.messages(t, c.queue)
		claims := map[string]bool{}
		for _, m := range msgs {
			if m.Claim != "" {
				claims[m.Claim] = true
			}
		}
		most = max(most, len(claims))
		if len(claims) > 2 {
			t.Fatalf("%d batches in flight, want at most 2 (maxConcurrency)", len(claims))
		}
		return len(msgs) == 0
	})
	if most != 2 {
		t.Errorf("at most %d batches were seen in flight, want 2", most)
	}

	// A claim left by a run that died: released at start, delivered again.
	w.h.Events.Close()
	w.send(t, c.queue, "ack")
	err := w.h.Store.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.QueueClaim(c.queue, "batch_dead", clk.Now(), clk.Now().Add(time.Hour), 10, store.Fence{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	startEvents(t, w)
	for {
		if b := c.batch(t); slices.Contains(b.bodies(), "ack/2") {
			break
		}
	}
	w.settled(t, c.queue)
}

// producerSource's scheduled handler sends a message through its queue
// producer binding; its queue handler logs each batch as queueSource's does.
const producerSource = `export default {
  async scheduled(event, env) {
    await env.EVENTS.send("from cron " + event.scheduledTime);
  },
  async queue(batch) {
    const text = (m) => new TextDecoder().decode(m.body);
    console.log(JSON.stringify({ batchId: batch.batchId, queue: batch.queue,
      messages: batch.messages.map((m) => ({ id: m.id, body: text(m), attempts: m.attempts, ts: m.timestampMillis })) }));
  },
};
`

// TestSendReachesTheConsumer: a message a worker sends through its
// producer binding (the gateway stores it) is delivered to the queue's
// consumer, with its exact bytes and the instant it was accepted, and is
// gone once the batch returned (spec/runtime-v1.md §5.4, §2.6).
func TestSendReachesTheConsumer(t *testing.T) {
	// The gateway stamps sends on the real clock: the test clock starts
	// there and jumps to a coming minute.
	clk := &clock{now: time.Now().UTC()}
	w := start(t, clk)
	qName, qUID := w.create(t, "AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600})
	worker, _ := w.create(t, "ModuleWorker", "worker", map[string]any{})
	digest, err := w.e.UploadBundle(context.Background(), w.e.A1, []byte(producerSource))
	if err != nil {
		t.Fatal(err)
	}
	bundle, _ := w.create(t, "WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	rel := conformance.Rel("ModuleWorker", worker)
	version, _ := w.create(t, "WorkerVersion", "version", map[string]any{"worker": rel, "bundle": conformance.Rel("WorkerBundle", bundle),
		"handlers": []any{"scheduled", "queue"}, "queueProducerBindings": []any{map[string]any{"name": "EVENTS", "resource": conformance.Rel("AtLeastOnceQueue", qName)}}})
	w.create(t, "WorkerDeployment", "deploy", map[string]any{"worker": rel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", version)}}})
	w.create(t, "QueueConsumer", "consumer", map[string]any{"queue": conformance.Rel("AtLeastOnceQueue", qName), "worker": rel,
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 1, "maxRetries": 0, "retryDelaySeconds": 0})
	_, trigger := w.create(t, "WorkerCronTrigger", "cron", map[string]any{"worker": rel, "cron": "* * * * *"})
	c := consumer{queue: qUID, queueName: qName, tail: w.tail(t, worker)}
	w.waitLive(t, trigger)

	m := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	before := time.Now().UnixMilli()
	clk.Set(m.Add(time.Second))
	b := c.batch(t)
	if len(b.Messages) != 1 || b.Messages[0].Body != "from cron "+itoa(m.UnixMilli()) || b.Messages[0].Attempts != 1 ||
		b.Messages[0].TS < before || b.Messages[0].TS > time.Now().UnixMilli() || b.Queue != qName {
		t.Fatalf("the consumer got %+v, want the cron's message from queue %s, attempts 1, accepted after %d", b, qName, before)
	}
	w.settled(t, qUID)
}

// TestQueueUnreachedKeepsAttempts: while the consumer's version cannot
// run (a sensitive variable unset), every batch reaches no handler: its
// messages stay, deliverable again with attempts unchanged, counted as
// unreached; once it runs, the first delivery has attempts 1
// (spec/runtime-v1.md §2.6, §3.2).
func TestQueueUnreachedKeepsAttempts(t *testing.T) {
	clk := &clock{now: minute(0)}
	w := start(t, clk)
	c := w.consumeWith(t, 3600, false, map[string]any{"maxBatchSize": 10, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 1, "maxRetries": 0, "retryDelaySeconds": 0},
		map[string]any{"requiredSensitiveVars": []any{"TOKEN"}})
	w.send(t, c.queue, "ack")
	q := map[string]string{"queue": c.queueName, "outcome": "unreached"}
	eventually(t, "two unreached batches", func() bool { return w.metric(t, "takoform_queue_batches_total", q) >= 2 })
	w.settled(t, c.queue, "ack/0")
	if got := w.metric(t, "takoform_queue_deliveries_total", map[string]string{"queue": c.queueName}); got != 0 {
		t.Errorf("deliveries while the version cannot run = %v, want 0", got)
	}
	if _, err := w.e.A1.SetSecret(context.Background(), client.Worker{Space: w.e.Space, Group: edge.Group, Name: c.worker}, "TOKEN", []byte("s3cret")); err != nil {
		t.Fatal(err)
	}
	sameBodies(t, "the first delivery", c.batch(t).bodies(), "ack/1")
	w.settled(t, c.queue)
}
