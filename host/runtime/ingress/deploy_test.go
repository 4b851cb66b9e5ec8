package ingress_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
)

// deployApp creates, as c's tenant through the Host API, a ModuleWorker
// running the one-module bundle source, a version serving fetch (its spec
// plus extra members), a deployment weighting that version 10000 and,
// when endpoint, a WorkerEndpoint. It returns the worker's name, the
// endpoint's hostname and url outputs ("" without an endpoint).
func deployApp(t *testing.T, e *conformance.Env, c *client.Client, source []byte, extra map[string]any, endpoint bool) (worker, hostname, url string) {
	t.Helper()
	ctx := context.Background()
	create := func(kind, prefix string, spec map[string]any) string {
		t.Helper()
		r, err := e.Create(ctx, c, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		if kind == "WorkerEndpoint" {
			var out struct{ Hostname, URL string }
			if err := json.Unmarshal(r.Status.Outputs, &out); err != nil {
				t.Fatalf("the endpoint's outputs %s: %v", r.Status.Outputs, err)
			}
			hostname, url = out.Hostname, out.URL
		}
		return r.Metadata.Name
	}
	worker = create("ModuleWorker", "worker", map[string]any{})
	rel := conformance.Rel("ModuleWorker", worker)
	digest, err := e.UploadBundle(ctx, c, source)
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	spec := map[string]any{"worker": rel, "bundle": conformance.Rel("WorkerBundle", bundle), "handlers": []any{"fetch"}}
	maps.Copy(spec, extra)
	version := create("WorkerVersion", "version", spec)
	create("WorkerDeployment", "deploy", map[string]any{"worker": rel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", version)}}})
	if endpoint {
		create("WorkerEndpoint", "endpoint", map[string]any{"worker": rel})
	}
	return worker, hostname, url
}
