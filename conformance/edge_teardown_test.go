package conformance_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestEdgeTeardownOrder builds a whole worker app, deletes its parts in
// the wrong order — each refusal must be dependency_in_use naming what
// still depends on the target — and then in the order the refusals teach
// (spec/host-api-v1alpha3.md §6.5): attachments and inbound callers, deployment, versions,
// bundle, worker.
func TestEdgeTeardownOrder(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
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
	wn := worker.Metadata.Name
	digest, err := e.UploadBundle(ctx, e.A1, conformance.Module("fetch", "scheduled", "queue"))
	if err != nil {
		t.Fatal(err)
	}
	bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	kv := create("EdgeKVNamespace", "kv", map[string]any{})
	version := create("WorkerVersion", "version", map[string]any{
		"worker": conformance.Rel("ModuleWorker", wn), "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name),
		"handlers":   []any{"fetch", "scheduled", "queue"},
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}},
	})
	deployment := create("WorkerDeployment", "deploy", map[string]any{
		"worker":   conformance.Rel("ModuleWorker", wn),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", version.Metadata.Name)}},
	})
	workerRel := conformance.Rel("ModuleWorker", wn)
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": workerRel})
	cron := create("WorkerCronTrigger", "cron", map[string]any{"worker": workerRel, "cron": "*/5 * * * *"})
	queue := create("AtLeastOnceQueue", "queue", map[string]any{"messageRetentionSeconds": 3600})
	consumer := create("QueueConsumer", "consumer", map[string]any{"worker": workerRel, "queue": conformance.Rel("AtLeastOnceQueue", queue.Metadata.Name),
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 5, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 0})
	domain := create("WorkerCustomDomain", "domain", map[string]any{"worker": workerRel, "hostname": "teardown.example.com"})
	attachments := []*wire.Resource{endpoint, cron, consumer, domain}

	// Wrong order: each delete is refused naming every dependent. Fresh
	// idempotency keys keep the refusals from replaying to the later,
	// legitimate deletes (a refusal record keeps replaying, spec/host-api-v1alpha3.md §3.5).
	refused := func(target *wire.Resource, dependents ...*wire.Resource) {
		t.Helper()
		path := conformance.ResourcePath(target.Form.FormRef, target.Metadata.Name, "") + conformance.ExactQuery(target.Metadata.Space, target.Form.FormRef)
		r, err := e.Do(ctx, hosttest.TokenA1, http.MethodDelete, path, map[string]string{
			wire.HeaderIdempotency: "wrong-order-" + target.Metadata.Name, wire.HeaderGeneration: target.Metadata.Generation}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.ExpectCode(wire.DependencyInUse); err != nil {
			t.Fatalf("delete %s %s before its dependents: %v", target.Kind, target.Metadata.Name, err)
		}
		body, _ := r.Envelope()
		for _, d := range dependents {
			if !strings.Contains(body.Message, d.Metadata.Name) {
				t.Errorf("the refusal to delete %s %s does not name its dependent %s %s: %q", target.Kind, target.Metadata.Name, d.Kind, d.Metadata.Name, body.Message)
			}
		}
	}
	refused(worker, append([]*wire.Resource{version, deployment}, attachments...)...)
	refused(bundle, version)
	refused(kv, version)
	refused(queue, consumer)
	refused(version, deployment)
	refused(deployment, attachments...)

	// Right order.
	for _, r := range append(attachments, deployment, version, bundle, worker, kv, queue) {
		if err := e.Delete(ctx, e.A1, r); err != nil {
			t.Fatalf("delete %s %s in teardown order: %v", r.Kind, r.Metadata.Name, err)
		}
		if _, err := e.A1.Read(ctx, conformance.Addr(r)); !client.IsNotFound(err) {
			t.Fatalf("%s %s after its delete: read answered %v, want resource_not_found", r.Kind, r.Metadata.Name, err)
		}
	}
}
