package ingress_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// countingWorker counts its visits in KV (bytes) and in its own SQLite
// table (tagged values), as examples/quickstart's worker does.
const countingWorker = `export default {
  async fetch(request, env, ctx) {
    const stored = await env.CACHE.get("visits");
    const kv = (stored === null ? 0 : Number(new TextDecoder().decode(stored))) + 1;
    await env.CACHE.put("visits", String(kv));
    await env.DB.execute("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    const { rows } = await env.DB.execute(
      "INSERT INTO counters (name, value) VALUES (?1, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value",
      [{ type: "text", value: "visits" }]);
    return Response.json({ kv, sql: rows[0].value });
  },
};
`

// TestRealProjectionsServeKVAndSQL: a version binding KV and SQL runs with
// the host's own projections (host/runtime/projection, which import each
// other by relative name) and gateway (hosttest's default): the worker
// reads and writes KV bytes and its own SQLite table through env, and the
// counts rise from one request to the next (spec/runtime-v1.md §5.1, §5.3).
func TestRealProjectionsServeKVAndSQL(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	create := func(kind, prefix string, spec any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		return r
	}
	worker := create("ModuleWorker", "worker", map[string]any{})
	workerRel := conformance.Rel("ModuleWorker", worker.Metadata.Name)
	kv := create("EdgeKVNamespace", "kv", map[string]any{})
	db := create("SQLiteDatabase", "db", map[string]any{})
	digest, err := e.UploadBundle(ctx, e.A1, []byte(countingWorker))
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	v := create("WorkerVersion", "version", map[string]any{"worker": workerRel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"},
		"kvBindings":     []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
		"sqliteBindings": []any{map[string]any{"name": "DB", "resource": conformance.Rel("SQLiteDatabase", db.Metadata.Name)}}})
	create("WorkerDeployment", "deploy", map[string]any{"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v.Metadata.Name)}}})
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": workerRel})
	var outputs struct{ Hostname string }
	if err := json.Unmarshal(endpoint.Status.Outputs, &outputs); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		KV  int
		SQL struct{ Type, Value string }
	}
	var first answer
	waitJSON(t, front, outputs.Hostname, &first)
	if first.KV != 1 || first.SQL.Type != "integer" || first.SQL.Value != "1" {
		t.Fatalf("first visit answered %+v, want kv 1 and sql {integer 1}", first)
	}
	var second answer
	waitJSON(t, front, outputs.Hostname, &second)
	if second.KV != 2 || second.SQL.Value != "2" {
		t.Errorf("second visit answered %+v, want kv 2 and sql 2", second)
	}
}
