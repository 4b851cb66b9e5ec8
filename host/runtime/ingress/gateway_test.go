package ingress_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// boundWorker uses a KV binding (CACHE) and an SQL binding (DB) through
// their projections: PUT /kv?key= stores the request's bytes, GET /kv?key=
// answers them (404 when absent), POST /sql counts a visit in its own
// table, GET /env lists env's names.
const boundWorker = `export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/env") return Response.json(Object.keys(env));
    if (url.pathname === "/kv") {
      const key = url.searchParams.get("key");
      if (request.method === "PUT") {
        await env.CACHE.put(key, await request.arrayBuffer());
        return new Response("stored");
      }
      const v = await env.CACHE.get(key);
      return v === null ? new Response("absent", { status: 404 }) : new Response(v);
    }
    if (url.pathname === "/sql") {
      await env.DB.execute("CREATE TABLE IF NOT EXISTS visits (n INTEGER NOT NULL)");
      await env.DB.execute("INSERT INTO visits (n) VALUES (?1)", [{ type: "integer", value: "1" }]);
      const r = await env.DB.query("SELECT count(*) AS c FROM visits");
      return new Response(r.rows[0].c.value);
    }
    return new Response("no route", { status: 404 });
  },
};
`

// deployKV deploys boundWorker binding a new KV namespace as CACHE and a
// new SQLite database as DB, and returns the endpoint hostname and the
// namespace's UID.
func deployKV(t *testing.T, e *conformance.Env) (hostname, kvUID string) {
	t.Helper()
	ctx := context.Background()
	kv, err := e.Create(ctx, e.A1, "EdgeKVNamespace", e.Name("kv"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := e.Create(ctx, e.A1, "SQLiteDatabase", e.Name("db"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	_, hostname, _ = deployApp(t, e, e.A1, []byte(boundWorker), map[string]any{
		"kvBindings":     []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
		"sqliteBindings": []any{map[string]any{"name": "DB", "resource": conformance.Rel("SQLiteDatabase", db.Metadata.Name)}},
	}, true)
	return hostname, kv.Metadata.UID
}

// TestBindingsServeFromTheHostsStore: a deployed worker's KV and SQL
// bindings reach the host's own store through the gateway
// (spec/runtime-v1.md §5.1, §5.3): env holds exactly CACHE and DB (§3.1);
// the bytes of check 11 (§8.3) round-trip exactly and are read again after
// the tenant's shard was killed and restarted (our addition to check 11);
// the SQL count keeps rising across the restart.
func TestBindingsServeFromTheHostsStore(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname, _ := deployKV(t, e)
	var names []string
	waitJSONAt(t, front, hostname, "/env", &names)
	if strings.Join(names, ",") != "CACHE,DB" {
		t.Errorf("Object.keys(env) = %v, want exactly [CACHE DB]", names)
	}
	value := append([]byte{0x00, 0x01, 0x02, 0x7f, 0x7f, 0xfe, 0xff}, "TAKOFORM"...)
	if status, body := do(t, front, http.MethodPut, hostname, "/kv?key=runtime-abi:kv", value); status != http.StatusOK || body != "stored" {
		t.Fatalf("PUT /kv answered %d %q", status, body)
	}
	if status, body := do(t, front, http.MethodGet, hostname, "/kv?key=runtime-abi:kv", nil); status != http.StatusOK || body != string(value) {
		t.Fatalf("GET /kv answered %d %x, want 200 %x", status, body, value)
	}
	if status, _ := do(t, front, http.MethodGet, hostname, "/kv?key=absent", nil); status != http.StatusNotFound {
		t.Errorf("an absent key answered %d, want the worker's 404 (get resolved null)", status)
	}
	for want := 1; want <= 2; want++ {
		if status, body := do(t, front, http.MethodPost, hostname, "/sql", nil); status != http.StatusOK || body != strconv.Itoa(want) {
			t.Fatalf("visit %d: POST /sql answered %d %q", want, status, body)
		}
	}
	pid := h.Runtime.Processes()["tenant-a"]
	if pid == 0 {
		t.Fatalf("no shard process for tenant-a: %v", h.Runtime.Processes())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; h.Runtime.Processes()["tenant-a"] == pid || h.Runtime.Processes()["tenant-a"] == 0; i++ {
		if i == 600 {
			t.Fatalf("the shard was not restarted after SIGKILL of %d", pid)
		}
		sleep()
	}
	var status int
	var body string
	for i := 0; i < 600; i++ {
		if status, body = do(t, front, http.MethodGet, hostname, "/kv?key=runtime-abi:kv", nil); status == http.StatusOK {
			break
		}
		sleep()
	}
	if status != http.StatusOK || body != string(value) {
		t.Errorf("after the shard's restart GET /kv answered %d %x, want 200 %x", status, body, value)
	}
	if status, body := do(t, front, http.MethodPost, hostname, "/sql", nil); status != http.StatusOK || body != "3" {
		t.Errorf("after the restart POST /sql answered %d %q, want the third visit", status, body)
	}
}

// TestBindingWithoutGatewayIsNotRunnable: with no gateway, a version with
// a KV binding does not run; its hostname answers the host's 503.
func TestBindingWithoutGatewayIsNotRunnable(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Runtime: func(c *runtime.Config) { c.Gateway = nil }})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname, _ := deployKV(t, e)
	status, hdr, body := get(t, front, hostname, "/")
	for i := 0; status == http.StatusNotFound && i < 300; i++ { // until the data plane reconciled
		sleep()
		status, hdr, body = get(t, front, hostname, "/")
	}
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || strings.Contains(body, "kvBindings") {
		t.Errorf("a KV-bound worker without a gateway answered %d %q (Retry-After %q), want the host's plain 503", status, body, hdr.Get("Retry-After"))
	}
	if n := len(h.Runtime.Processes()); n != 0 {
		t.Errorf("%d shard processes run for a tenant whose only version cannot run", n)
	}
}

// waitJSONAt polls GET hostname+path until it answers 200 and decodes it
// into v.
func waitJSONAt(t *testing.T, front *httptest.Server, hostname, path string, v any) {
	t.Helper()
	var last string
	for range 600 {
		status, _, body := get(t, front, hostname, path)
		if status == http.StatusOK {
			if err := json.Unmarshal([]byte(body), v); err != nil {
				t.Fatalf("answer %q: %v", body, err)
			}
			return
		}
		last = body
		sleep()
	}
	t.Fatalf("%s never answered 200; last %q", hostname, last)
}

// do sends method hostname+path with body through the ingress and returns
// the status and body.
func do(t *testing.T, front *httptest.Server, method, hostname, path string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, front.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = hostname
	res, err := front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}
