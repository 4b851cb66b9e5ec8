package ingress_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// echoGateway answers every binding call with the shard's tenant and the
// Takoform-Binding header it received: the seam's observable half.
type echoGateway struct{}

func (echoGateway) ForTenant(tenant string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"tenant": tenant, "binding": r.Header.Get("Takoform-Binding"), "path": r.URL.Path})
	})
}

// kvProjection is a stand-in projection (the data side supplies the real
// one): get(key) calls the raw binding and returns the gateway's answer;
// it also tries to forge the binding header.
const kvProjection = `export function makeKV(raw) {
  return {
    async get(key) {
      const r = await raw.fetch("http://gateway/kv/get?key=" + encodeURIComponent(key), { headers: { "Takoform-Binding": "forged" } });
      return r.json();
    },
  };
}
`

const kvWorker = `export default {
  async fetch(request, env, ctx) {
    return Response.json({ keys: Object.keys(env), seen: await env.CACHE.get("k") });
  },
};
`

// deployKV deploys a worker binding a new KV namespace as CACHE and
// returns the endpoint hostname and the namespace's UID.
func deployKV(t *testing.T, e *conformance.Env) (hostname, kvUID string) {
	t.Helper()
	ctx := context.Background()
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
	digest, err := e.UploadBundle(ctx, e.A1, []byte(kvWorker))
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	v := create("WorkerVersion", "version", map[string]any{"worker": workerRel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"},
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}}})
	create("WorkerDeployment", "deploy", map[string]any{"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v.Metadata.Name)}}})
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": workerRel})
	var outputs struct{ Hostname string }
	if err := json.Unmarshal(endpoint.Status.Outputs, &outputs); err != nil {
		t.Fatal(err)
	}
	return outputs.Hostname, kv.Metadata.UID
}

// TestBindingReachesTheGatewayWithItsUID: a KV binding's calls reach the
// shard's gateway (ForTenant of the worker's tenant) with the bound
// namespace's UID in Takoform-Binding, whatever header the code sends;
// env holds exactly the binding name (spec/runtime-v1.md §0.3, §3.1, §5.0).
func TestBindingReachesTheGatewayWithItsUID(t *testing.T) {
	bin := enginetest.Binary(t)
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: bin, Logger: log, Runtime: func(c *runtime.Config) {
		c.Gateway = echoGateway{}
		c.Projections = map[string]string{engine.Projections[engine.KindKV].Module: kvProjection}
	}})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname, kvUID := deployKV(t, e)
	var got struct {
		Keys []string
		Seen map[string]string
	}
	waitJSON(t, front, hostname, &got)
	if strings.Join(got.Keys, ",") != "CACHE" {
		t.Errorf("Object.keys(env) = %v, want exactly [CACHE]", got.Keys)
	}
	if got.Seen["tenant"] != "tenant-a" || got.Seen["binding"] != kvUID || got.Seen["path"] != "/kv/get" {
		t.Errorf("the gateway saw %v, want tenant-a, binding %s (never the code's forged header), path /kv/get", got.Seen, kvUID)
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

// waitJSON polls GET hostname/ until it answers 200 and decodes it into v.
func waitJSON(t *testing.T, front *httptest.Server, hostname string, v any) {
	t.Helper()
	var last string
	for range 600 {
		status, _, body := get(t, front, hostname, "/")
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
