package replicatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// eventsWorker answers GET /send?body= by sending the body to EVENTS and
// answering the message id; its scheduled handler writes one KV entry per
// invocation, cron/<scheduledTime>/<random> = the invocation's Date.now();
// its queue handler writes msg/<body>/<id>/<attempts> for each message and
// acknowledges it, except a body starting "poison", which it retries (so
// it ends on the dead-letter queue after 1 + maxRetries deliveries).
const eventsWorker = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/send") return new Response(await env.EVENTS.send(url.searchParams.get("body")));
    return new Response("events worker");
  },
  async scheduled(event, env) {
    await env.CACHE.put("cron/" + event.scheduledTime + "/" + crypto.randomUUID(), String(Date.now()));
  },
  async queue(batch, env) {
    for (const m of batch.messages) {
      const body = new TextDecoder().decode(m.body);
      if (body.startsWith("poison")) { batch.retry(m.id); continue; }
      await env.CACHE.put("msg/" + body + "/" + m.id + "/" + m.attempts, "1");
      batch.acknowledge(m.id);
    }
  },
};
`

// eventsApp is eventsWorker deployed on a cluster with a cron trigger
// firing every minute and a queue consumer with a dead-letter queue.
type eventsApp struct {
	c        *replicatest.Cluster
	e        *conformance.Env
	db       *pgx.Conn
	hostname string
	// UIDs of the KV namespace, the trigger, the queue and its
	// dead-letter queue.
	kv, trigger, queue, dlq string
	// Names of the worker, its deployment (a rollout updates it), the KV
	// namespace and the queue.
	worker, deployment, kvName, queueName string
}

// eventsCluster starts two replicas on one PostgreSQL, each with its own
// workerd and ingress, env[i] the extra environment of replica i.
func eventsCluster(t *testing.T, env map[int][]string) *replicatest.Cluster {
	t.Helper()
	return cluster(t, 2, replicatest.Options{Args: []string{"--workerd", enginetest.Binary(t), "--ingress", "127.0.0.1:0"}, Env: env})
}

// deployEvents deploys source as eventsWorker is deployed (handlers
// fetch, scheduled and queue; CACHE and EVENTS bound) and waits until
// both replicas' ingresses answer it.
func deployEvents(t *testing.T, c *replicatest.Cluster, source string) *eventsApp {
	t.Helper()
	ctx := context.Background()
	a := &eventsApp{c: c, e: newEnv(t, c.URL, "")}
	e := a.e
	create := func(kind, prefix string, spec map[string]any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v\n%s", kind, err, c.Logs())
		}
		return r
	}
	kv := create("EdgeKVNamespace", "kv", map[string]any{})
	q := create("AtLeastOnceQueue", "events", queueSpec(3600))
	dlq := create("AtLeastOnceQueue", "dead", queueSpec(3600))
	a.kv, a.queue, a.dlq = kv.Metadata.UID, q.Metadata.UID, dlq.Metadata.UID
	a.kvName, a.queueName = kv.Metadata.Name, q.Metadata.Name
	a.worker = create("ModuleWorker", "worker", map[string]any{}).Metadata.Name
	version := a.version(t, e, source, map[string]any{
		"handlers":              []any{"fetch", "scheduled", "queue"},
		"kvBindings":            []any{map[string]any{"name": "CACHE", "resource": e.Rel("EdgeKVNamespace", a.kvName)}},
		"queueProducerBindings": []any{map[string]any{"name": "EVENTS", "resource": e.Rel("AtLeastOnceQueue", a.queueName)}},
	})
	a.deployment = create("WorkerDeployment", "deploy", map[string]any{"worker": e.Rel("ModuleWorker", a.worker),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", version)}}}).Metadata.Name
	a.trigger = create("WorkerCronTrigger", "cron", map[string]any{"worker": e.Rel("ModuleWorker", a.worker), "cron": "* * * * *"}).Metadata.UID
	create("QueueConsumer", "consumer", map[string]any{"worker": e.Rel("ModuleWorker", a.worker), "queue": e.Rel("AtLeastOnceQueue", q.Metadata.Name),
		"deadLetterQueue": e.Rel("AtLeastOnceQueue", dlq.Metadata.Name),
		"maxBatchSize":    10, "maxBatchTimeoutSeconds": 0, "maxConcurrency": 2, "maxRetries": 1, "retryDelaySeconds": 0})
	ep := create("WorkerEndpoint", "endpoint", map[string]any{"worker": e.Rel("ModuleWorker", a.worker)})
	var out struct{ Hostname string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.Hostname == "" {
		t.Fatalf("the endpoint's outputs %s: %v", ep.Status.Outputs, err)
	}
	a.hostname = out.Hostname
	for i := range c.Replicas {
		a.waitServing(t, i, 60*time.Second)
	}
	db, err := pgx.Connect(ctx, c.Data())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	a.db = db
	return a
}

// version uploads source and creates, through e, a WorkerVersion of it
// on a's worker with spec's other fields (handlers, bindings), returning
// its name.
func (a *eventsApp) version(t *testing.T, e *conformance.Env, source string, spec map[string]any) string {
	t.Helper()
	ctx := context.Background()
	digest, err := e.UploadBundle(ctx, e.A1, []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	if err != nil {
		t.Fatal(err)
	}
	spec["worker"], spec["bundle"] = e.Rel("ModuleWorker", a.worker), e.Rel("WorkerBundle", bundle.Metadata.Name)
	v, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), spec)
	if err != nil {
		t.Fatalf("create WorkerVersion: %v", err)
	}
	return v.Metadata.Name
}

// get sends GET path to replica i's worker ingress for a's hostname.
func (a *eventsApp) get(i int, path string) (int, string, error) {
	ingress := a.c.Replicas[i].Ingress()
	if ingress == "" {
		return 0, "", fmt.Errorf("replica %d announced no worker ingress", i)
	}
	req, err := http.NewRequest("GET", ingress+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = a.hostname
	res, err := ingressClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

var ingressClient = &http.Client{Timeout: 20 * time.Second}

// waitServing waits until replica i's ingress answers a's worker 200.
func (a *eventsApp) waitServing(t *testing.T, i int, within time.Duration) {
	t.Helper()
	var status int
	var body string
	var err error
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if status, body, err = a.get(i, "/"); err == nil && status == http.StatusOK {
			return
		}
	}
	t.Fatalf("replica %d's ingress answered %d %q (%v) %v after the deploy, want the worker's 200:\n%s", i, status, body, err, within, a.c.Logs())
}

// lease reads the events lease; replica is the index of the replica
// holding it (by the API address its holder name ends with), -1 when
// none does.
func (a *eventsApp) lease(t *testing.T) (l store.Lease, replica int) {
	t.Helper()
	var expires int64
	err := a.db.QueryRow(context.Background(), `SELECT holder, epoch, expires_at FROM leases WHERE name = $1`, store.EventsLease).Scan(&l.Holder, &l.Epoch, &expires)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	l.Expires = time.UnixMilli(expires).UTC()
	for i, r := range a.c.Replicas {
		if r.URL != "" && strings.HasSuffix(l.Holder, " "+strings.TrimPrefix(r.URL, "http://")) {
			return l, i
		}
	}
	return l, -1
}

// waitLease waits until a replica other than not holds the lease, and
// returns it.
func (a *eventsApp) waitLease(t *testing.T, not int, within time.Duration) (store.Lease, int) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		l, i := a.lease(t)
		if i >= 0 && i != not && l.Expires.After(time.Now()) {
			return l, i
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replica but %d held the events lease within %v (last %+v):\n%s", not, within, l, a.c.Logs())
		}
	}
}

// firing is one cron_firings row of a's trigger.
type firing struct {
	state string
	epoch int64
}

// firings reads the store's firing records of a's trigger by minute.
func (a *eventsApp) firings(t *testing.T) map[time.Time]firing {
	t.Helper()
	rows, err := a.db.Query(context.Background(), `SELECT minute, state, epoch FROM cron_firings WHERE trigger_uid = $1`, a.trigger)
	if err != nil {
		t.Fatal(err)
	}
	out := map[time.Time]firing{}
	for rows.Next() {
		var ms int64
		var f firing
		if err := rows.Scan(&ms, &f.state, &f.epoch); err != nil {
			t.Fatal(err)
		}
		out[time.UnixMilli(ms).UTC()] = f
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// invocations reads the scheduled handler's KV entries: by matched
// minute, the instants of its invocations.
func (a *eventsApp) invocations(t *testing.T) map[time.Time][]time.Time {
	t.Helper()
	out := map[time.Time][]time.Time{}
	for key, value := range a.kvPrefix(t, "cron/") {
		var minute, at int64
		if _, err := fmt.Sscanf(strings.SplitN(key, "/", 3)[1], "%d", &minute); err != nil {
			t.Fatalf("KV key %q: %v", key, err)
		}
		if _, err := fmt.Sscanf(value, "%d", &at); err != nil {
			t.Fatalf("KV %q = %q: %v", key, value, err)
		}
		m := time.UnixMilli(minute).UTC()
		out[m] = append(out[m], time.UnixMilli(at).UTC())
	}
	return out
}

// kvPrefix reads a's KV entries whose key starts with prefix.
func (a *eventsApp) kvPrefix(t *testing.T, prefix string) map[string]string {
	t.Helper()
	rows, err := a.db.Query(context.Background(), `SELECT key, value FROM kv_entries WHERE namespace = $1 AND position($2::bytea in key) = 1`, a.kv, []byte(prefix))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[string(k)] = string(v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bodies reads the bodies of the messages stored on queue uid, with
// their counts.
func (a *eventsApp) bodies(t *testing.T, uid string) map[string]int {
	t.Helper()
	rows, err := a.db.Query(context.Background(), `SELECT body FROM queue_messages WHERE queue = $1`, uid)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out[string(b)]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// untilSecond sleeps until the wall clock's second within the minute is
// at least s (the next minute's when it is past s + 5 already).
func untilSecond(s int) {
	now := time.Now()
	at := now.Truncate(time.Minute).Add(time.Duration(s) * time.Second)
	if now.After(at.Add(5 * time.Second)) {
		at = at.Add(time.Minute)
	}
	time.Sleep(time.Until(at))
}

// eventLogs is every replica's log lines of the events dispatcher (for
// failure messages: Cluster.Logs' tails are the ingress's).
func (a *eventsApp) eventLogs() string {
	var b strings.Builder
	for _, r := range a.c.Replicas {
		fmt.Fprintf(&b, "--- replica %d (%s)\n", r.Index, r.URL)
		for _, line := range strings.Split(r.LogText(), "\n") {
			if strings.Contains(line, "events") || strings.Contains(line, "cron") || strings.Contains(line, "queue:") || strings.Contains(line, "level=ERROR") {
				fmt.Fprintln(&b, line)
			}
		}
	}
	return b.String()
}
