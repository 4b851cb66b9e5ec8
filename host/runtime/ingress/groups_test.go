package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// groupSource answers {answer: label} and, through its KV binding CACHE,
// stores (PUT /kv?key=) and reads (GET /kv?key=) bytes; with SQL, POST
// /sql counts a visit in the migrated table visits and POST /schema
// tries a schema change, answering the error's name.
func groupSource(label string, sql bool) []byte {
	routes := ""
	if sql {
		routes = `
    if (url.pathname === "/sql") {
      await env.DB.execute("INSERT INTO visits (n) VALUES (?1)", [1]);
      const r = await env.DB.query("SELECT count(*) AS c, typeof(count(*)) AS t FROM visits");
      return Response.json(r);
    }
    if (url.pathname === "/schema") {
      try { await env.DB.execute("CREATE TABLE t (x)"); return new Response("created"); } catch (e) { return new Response(e.name); }
    }`
	}
	return fmt.Appendf(nil, `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/kv") {
      const key = url.searchParams.get("key");
      if (request.method === "PUT") {
        await env.CACHE.put(key, await request.arrayBuffer());
        return new Response("stored");
      }
      const v = await env.CACHE.get(key);
      return v === null ? new Response("absent", { status: 404 }) : new Response(v);
    }%s
    console.log("answered by", %q);
    return Response.json({ answer: %q });
  },
};
`, routes, label, label)
}

// TestBothEdgeGroupsRunSideBySide: a v1beta1 ModuleWorker with bundle,
// version, deployment and endpoint answers at its URL with its own code
// beside the v1alpha1 worker of the SAME name in the same space, each
// binding a KV namespace of its own group (the families never relate:
// a key stored through one is absent through the other), the v1beta1 one
// also a v1beta1 SQLiteDatabase whose schema came from a migration and
// which refuses a schema change at runtime; tail follows each worker by
// its group.
//
// Every resource is created through the Host API, each app on its own
// lane. The v1alpha1 app is created on a host serving the builtin family,
// which is then stopped, and the v1beta1 app (lane v1beta1) on a host
// over the SAME data file serving our v1beta1 family
// (forms/edge.FamilyV1beta1) alone: its data plane reads the store, so it
// runs both, including the app no lane of it installs. The migration's SQL is run by
// the gateway's ApplyMigrations directly (through the Host API's
// SQLiteMigrationApplication: migrations_test.go).
func TestBothEdgeGroupsRunSideBySide(t *testing.T) {
	bin := enginetest.Binary(t)
	h, _ := startHost(t, bin)
	ctx := context.Background()
	creds := conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}
	e, err := conformance.NewEnv(ctx, h.URL, creds, false)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := e.Create(ctx, e.A1, "EdgeKVNamespace", e.Name("kv"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	worker, alphaHost, _ := deployApp(t, e, e.A1, groupSource("alpha", false), map[string]any{
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
	}, true)
	h.Stop()

	cat, _, err := host.LoadFamilies([]host.FamilySource{{Name: "v1beta1", FS: edge.FamilyV1beta1()}})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h = hosttest.Start(t, hosttest.Options{Path: h.Path, Catalog: cat, Workerd: bin, Logger: log})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	eb, err := conformance.NewEnvOptions(ctx, h.URL, creds, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	betaHost, dbUID := deployV1beta1(t, eb, cat, e.Space, worker, groupSource("beta", true))
	ledger, err := h.Gateway.ApplyMigrations(ctx, dbUID, []gateway.MigrationFile{
		{Path: "0001_visits.sql", Digest: "sha256:01", SQL: "CREATE TABLE visits (n INTEGER NOT NULL);"},
	})
	if err != nil || len(ledger) != 1 {
		t.Fatalf("migrate: %v %v", ledger, err)
	}

	waitFor(t, front, alphaHost, "alpha")
	waitFor(t, front, betaHost, "beta")
	if a, _ := h.Runtime.WorkerOf(betaHost); a.Group != edge.GroupV1beta1 || a.Name != worker || a.Space != e.Space {
		t.Errorf("the v1beta1 endpoint routes to %+v; want %s/%s of %s", a, e.Space, worker, edge.GroupV1beta1)
	}
	if a, _ := h.Runtime.WorkerOf(alphaHost); a.Group != edge.GroupV1alpha1 || a.Name != worker || a.Space != e.Space {
		t.Errorf("the v1alpha1 endpoint routes to %+v; want %s/%s of %s", a, e.Space, worker, edge.GroupV1alpha1)
	}

	if status, body := do(t, front, http.MethodPut, betaHost, "/kv?key=k", []byte("from beta")); status != 200 || body != "stored" {
		t.Fatalf("put through the v1beta1 worker: %d %s", status, body)
	}
	if status, body := do(t, front, http.MethodGet, betaHost, "/kv?key=k", nil); status != 200 || body != "from beta" {
		t.Errorf("get through the v1beta1 worker: %d %s", status, body)
	}
	if status, body := do(t, front, http.MethodGet, alphaHost, "/kv?key=k", nil); status != 404 {
		t.Errorf("get through the v1alpha1 worker of a key stored in the v1beta1 namespace: %d %s; want absent", status, body)
	}
	// the v1beta1 key limit (467 bytes) holds for the v1beta1 binding only
	long := strings.Repeat("k", gateway.MaxKVKeyBytesV1beta1+1)
	if status, _ := do(t, front, http.MethodPut, betaHost, "/kv?key="+long, []byte("x")); status != 500 {
		t.Errorf("a 468-byte key through the v1beta1 worker: %d; want the uncaught invalid_key (500)", status)
	}
	if status, _ := do(t, front, http.MethodPut, alphaHost, "/kv?key="+long, []byte("x")); status != 200 {
		t.Errorf("a 468-byte key through the v1alpha1 worker: %d; want stored", status)
	}

	for i := 1; i <= 2; i++ {
		status, body := do(t, front, http.MethodPost, betaHost, "/sql", nil)
		if want := fmt.Sprintf(`{"rows":[{"c":%d,"t":"integer"}],"rowsWritten":0}`, i); status != 200 || body != want {
			t.Errorf("v1beta1 SQL visit %d: %d %s; want %s", i, status, body, want)
		}
	}
	if status, body := do(t, front, http.MethodPost, betaHost, "/schema", nil); status != 200 || body != "sql_error" {
		t.Errorf("a schema change at runtime: %d %s; want sql_error", status, body)
	}

	tailCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	records := make(chan runtime.TailRecord, 16)
	for _, group := range []string{edge.GroupV1beta1, edge.GroupV1alpha1} {
		stream, err := h.Runtime.Tail(tailCtx, "tenant-a", e.Space, worker, group)
		if err != nil {
			t.Fatalf("tail of %s: %v", group, err)
		}
		go func() { _ = stream(func(r runtime.TailRecord) error { records <- r; return nil }) }()
	}
	waitFor(t, front, betaHost, "beta")
	select {
	case r := <-records:
		if r.Worker.Group != edge.GroupV1beta1 || !strings.Contains(r.Message, "beta") {
			t.Errorf("the record of a v1beta1 request: %+v", r)
		}
	case <-tailCtx.Done():
		t.Fatal("no tail record of the v1beta1 worker")
	}
}

// deployV1beta1 creates through e's host, in space, the v1beta1 app: a
// ModuleWorker named worker, an EdgeKVNamespace bound as CACHE, a
// SQLiteDatabase bound as DB, the bundle of source, a version serving
// fetch, a deployment and an endpoint. It returns the endpoint's hostname
// and the database's UID.
func deployV1beta1(t *testing.T, e *conformance.Env, cat *form.Catalog, space, worker string, source []byte) (hostname, dbUID string) {
	t.Helper()
	ctx := context.Background()
	refs := map[string]form.FormRef{}
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.APIVersion == edge.GroupV1beta1 {
			refs[r.Kind] = r
		}
	}
	rel := func(kind, name string) map[string]any {
		return map[string]any{"apiVersion": edge.GroupV1beta1, "kind": kind, "name": name}
	}
	create := func(kind, name string, spec map[string]any) *wire.Resource {
		t.Helper()
		r, err := e.Apply(ctx, e.A1, e.RequestIn(space, refs[kind], name, spec), nil)
		if err != nil {
			t.Fatalf("create the v1beta1 %s: %v", kind, err)
		}
		return r
	}
	create("ModuleWorker", worker, map[string]any{})
	kv := create("EdgeKVNamespace", e.Name("kv"), map[string]any{})
	db := create("SQLiteDatabase", e.Name("db"), map[string]any{})
	digest, err := e.UploadBundle(ctx, e.A1, source)
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	version := create("WorkerVersion", e.Name("version"), map[string]any{
		"worker": rel("ModuleWorker", worker), "bundle": rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"},
		"kvBindings":     []any{map[string]any{"name": "CACHE", "resource": rel("EdgeKVNamespace", kv.Metadata.Name)}},
		"sqliteBindings": []any{map[string]any{"name": "DB", "resource": rel("SQLiteDatabase", db.Metadata.Name)}},
	})
	create("WorkerDeployment", e.Name("deploy"), map[string]any{"worker": rel("ModuleWorker", worker),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": rel("WorkerVersion", version.Metadata.Name)}}})
	ep := create("WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": rel("ModuleWorker", worker)})
	var out struct{ Hostname string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.Hostname == "" {
		t.Fatalf("the v1beta1 endpoint's outputs %s: %v", ep.Status.Outputs, err)
	}
	return out.Hostname, db.Metadata.UID
}
