package replicatest_test

import (
	"bytes"
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
)

// dataWorker serves its bindings over HTTP: PUT/GET /kv?key= through
// CACHE, PUT/GET /obj?key= through FILES (the request body streamed in,
// the object's body streamed out), POST /send?body= through EVENTS
// answering the message id; anything else answers "data worker".
const dataWorker = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.searchParams.get("key");
    if (url.pathname === "/kv") {
      if (request.method === "PUT") { await env.CACHE.put(key, await request.text()); return new Response("stored"); }
      const v = await env.CACHE.get(key);
      return v === null ? new Response("absent", { status: 404 }) : new Response(v);
    }
    if (url.pathname === "/obj") {
      if (request.method === "PUT") {
        const r = await env.FILES.put(key, request.body, { contentLength: Number(request.headers.get("content-length")) });
        return Response.json(r);
      }
      const o = await env.FILES.get(key);
      return o === null ? new Response("absent", { status: 404 }) : new Response(o.body);
    }
    if (url.pathname === "/send") return new Response(await env.EVENTS.send(url.searchParams.get("body")));
    return new Response("data worker");
  },
};
`

// sqlWorker binds a SQLiteDatabase, which a host on PostgreSQL refuses.
// sqlWorker keeps ids in its database: POST /init makes the table, POST
// /add?id=X adds one (answering "ok" once the gateway acknowledged it),
// GET / lists them in order, comma-separated.
const sqlWorker = `export default { async fetch(request, env) {
  const u = new URL(request.url);
  if (request.method === "POST" && u.pathname === "/init") {
    await env.DB.execute("CREATE TABLE IF NOT EXISTS ids (id TEXT PRIMARY KEY)");
    return new Response("ok");
  }
  if (request.method === "POST" && u.pathname === "/add") {
    await env.DB.execute("INSERT INTO ids (id) VALUES (?1)", [{ type: "text", value: u.searchParams.get("id") }]);
    return new Response("ok");
  }
  const r = await env.DB.query("SELECT id FROM ids ORDER BY id");
  return new Response(r.rows.map((row) => row.id.value).join(","));
} };`

// TestWorkersServeFromEveryReplica (spec/runtime-v1.md §10.5, repo
// decision 0061): two replicas on one PostgreSQL, each with its own
// workerd and its own ingress (`--ingress`, no --worker-data). A worker
// deployed once answers through both ingresses, the replica that did not
// commit it told at once (store.Peers); KV put through replica A
// is read through replica B; an object of more than two 1 MiB chunks put
// through A streams back byte-identical through B (and B's through A); a
// queue send through either is stored once; a SQLiteDatabase's rows
// written through either replica are read through both (one replica owns
// it, the other forwards: repo decision 0063).
func TestWorkersServeFromEveryReplica(t *testing.T) {
	bin := enginetest.Binary(t)
	c := cluster(t, 2, replicatest.Options{Args: []string{"--workerd", bin, "--ingress", "127.0.0.1:0"}})
	e := newEnv(t, c.URL, "")
	ctx := context.Background()
	create := func(kind, prefix string, spec map[string]any) string { return createResource(t, e, kind, prefix, spec) }
	deploy := func(source string, bindings map[string]any) string { return deployWorker(t, e, source, bindings) }
	kv := create("EdgeKVNamespace", "kv", map[string]any{})
	bucket := create("ObjectBucket", "files", map[string]any{})
	queue := create("AtLeastOnceQueue", "events", queueSpec(3600))
	hostname := deploy(dataWorker, map[string]any{
		"kvBindings":            []any{map[string]any{"name": "CACHE", "resource": e.Rel("EdgeKVNamespace", kv)}},
		"bucketBindings":        []any{map[string]any{"name": "FILES", "resource": e.Rel("ObjectBucket", bucket)}},
		"queueProducerBindings": []any{map[string]any{"name": "EVENTS", "resource": e.Rel("AtLeastOnceQueue", queue)}},
	})
	ingress := []string{c.Replicas[0].Ingress(), c.Replicas[1].Ingress()}
	for i, u := range ingress {
		if u == "" {
			t.Fatalf("replica %d announced no worker ingress:\n%s", i, c.Logs())
		}
	}
	do := func(i int, method, path string, body []byte) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, ingress[i]+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = hostname
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("replica %d: %s %s: %v", i, method, path, err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("replica %d: %s %s: reading the answer: %v", i, method, path, err)
		}
		return res.StatusCode, b
	}
	deployed := time.Now()
	// Each replica starts the worker in its own workerd: the one that
	// committed the endpoint at once, the other when it hears the
	// announcement (store.Peers), not at its next periodic reconcile
	// 30 s on — so both serve well before that.
	for i := range ingress {
		var status int
		var body []byte
		for deadline := deployed.Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if status, body = do(i, "GET", "/", nil); status == http.StatusOK {
				break
			}
		}
		if status != http.StatusOK || string(body) != "data worker" {
			t.Fatalf("replica %d's ingress answered %d %q 20 s after the deploy, want the worker's 200 (did it hear the other replica's announcement?):\n%s", i, status, body, c.Logs())
		}
		t.Logf("replica %d served the worker %v after its endpoint was created", i, time.Since(deployed).Round(time.Millisecond))
	}

	if status, body := do(0, "PUT", "/kv?key=greeting", []byte("hello from A")); status != 200 {
		t.Fatalf("KV put through A: %d %s", status, body)
	}
	put := time.Now()
	var status int
	var body []byte
	for time.Since(put) < 10*time.Second {
		if status, body = do(1, "GET", "/kv?key=greeting", nil); status == http.StatusOK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status != 200 || string(body) != "hello from A" {
		t.Fatalf("KV get through B within 10 s of the put through A: %d %q", status, body)
	}
	t.Logf("KV put through A was read through B after %v", time.Since(put).Round(time.Millisecond))

	big := make([]byte, 2*store.ObjectChunkBytes+777)
	for i := range big {
		big[i] = byte(i*31 + i>>20)
	}
	for _, from := range []int{0, 1} {
		key := fmt.Sprintf("blob-%d", from)
		if status, body := do(from, "PUT", "/obj?key="+key, big); status != 200 || !strings.Contains(string(body), fmt.Sprintf(`"size":%d`, len(big))) {
			t.Fatalf("object put through replica %d: %d %s", from, status, body)
		}
		to := 1 - from
		if status, body := do(to, "GET", "/obj?key="+key, nil); status != 200 || !bytes.Equal(body, big) {
			t.Fatalf("object put through replica %d, read through %d: %d, %d bytes (want %d, byte-identical)", from, to, status, len(body), len(big))
		}
	}

	ids := map[string]bool{}
	for i := range 6 {
		status, body := do(i%2, "POST", fmt.Sprintf("/send?body=event-%d", i), nil)
		if status != 200 || len(body) == 0 || ids[string(body)] {
			t.Fatalf("send %d through replica %d: %d %q (ids so far %v)", i, i%2, status, body, ids)
		}
		ids[string(body)] = true
	}
	conn, err := pgx.Connect(ctx, c.Data())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored, distinct int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT body) FROM queue_messages`).Scan(&stored, &distinct); err != nil {
		t.Fatal(err)
	}
	if stored != 6 || distinct != 6 {
		t.Errorf("queue_messages holds %d messages (%d distinct bodies) after 6 sends through two replicas; want each stored once", stored, distinct)
	}
	var localBodies int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM objects WHERE file LIKE '%/%'`).Scan(&localBodies); err != nil || localBodies != 0 {
		t.Errorf("objects naming paths: %d %v", localBodies, err)
	}

	db := create("SQLiteDatabase", "db", map[string]any{})
	sqlHost := deploy(sqlWorker, map[string]any{"sqliteBindings": []any{map[string]any{"name": "DB", "resource": e.Rel("SQLiteDatabase", db)}}})
	hostname = sqlHost
	for i := range ingress {
		var status int
		var body []byte
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if status, body = do(i, "POST", "/init", nil); status == http.StatusOK {
				break
			}
		}
		if status != http.StatusOK {
			t.Fatalf("replica %d answered %d %s for the SQL worker's /init; want 200:\n%s", i, status, body, c.Logs())
		}
	}
	var want []string
	for i := range 6 {
		id := fmt.Sprintf("id-%d", i)
		if status, body := do(i%2, "POST", "/add?id="+id, nil); status != 200 {
			t.Fatalf("SQL insert %s through replica %d: %d %s", id, i%2, status, body)
		}
		want = append(want, id)
	}
	for i := range ingress {
		if status, body := do(i, "GET", "/", nil); status != 200 || string(body) != strings.Join(want, ",") {
			t.Errorf("SQL rows read through replica %d: %d %q; want %q", i, status, body, strings.Join(want, ","))
		}
	}
}

// createResource creates a resource of kind named from prefix in e's
// space (tenant A1) and returns its name.
func createResource(t *testing.T, e *conformance.Env, kind, prefix string, spec map[string]any) string {
	t.Helper()
	r, err := e.Create(context.Background(), e.A1, kind, e.Name(prefix), spec)
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	return r.Metadata.Name
}

// deployWorker deploys source as a worker with bindings (fields of its
// WorkerVersion) behind an endpoint and returns the endpoint's hostname.
func deployWorker(t *testing.T, e *conformance.Env, source string, bindings map[string]any) string {
	t.Helper()
	ctx := context.Background()
	worker := createResource(t, e, "ModuleWorker", "worker", map[string]any{})
	digest, err := e.UploadBundle(ctx, e.A1, []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	bundle := createResource(t, e, "WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	spec := map[string]any{"worker": e.Rel("ModuleWorker", worker), "bundle": e.Rel("WorkerBundle", bundle), "handlers": []any{"fetch"}}
	for k, v := range bindings {
		spec[k] = v
	}
	version := createResource(t, e, "WorkerVersion", "version", spec)
	createResource(t, e, "WorkerDeployment", "deploy", map[string]any{"worker": e.Rel("ModuleWorker", worker),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", version)}}})
	r, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", worker)})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Hostname string }
	if err := json.Unmarshal(r.Status.Outputs, &out); err != nil || out.Hostname == "" {
		t.Fatalf("the endpoint's outputs %s: %v", r.Status.Outputs, err)
	}
	return out.Hostname
}
