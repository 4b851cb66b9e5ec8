package replicatest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// conflict is a pair of creates of which the lane admits at most one.
type conflict struct {
	what string
	kind string
	// setup creates what both need in e's space and returns the two specs.
	setup func(ctx context.Context, e *conformance.Env) (a, b map[string]any, err error)
}

func queueConsumerSpec(worker, queue string) map[string]any {
	return map[string]any{"worker": conformance.Rel("ModuleWorker", worker), "queue": conformance.Rel("AtLeastOnceQueue", queue),
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 5, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 0}
}

var conflicts = []conflict{
	{what: "two deployments of one worker", kind: "WorkerDeployment", setup: func(ctx context.Context, e *conformance.Env) (map[string]any, map[string]any, error) {
		w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
		if err != nil {
			return nil, nil, err
		}
		app := &conformance.App{Worker: w}
		if err := e.AddVersion(ctx, e.A1, app, "fetch"); err != nil {
			return nil, nil, err
		}
		spec := map[string]any{"worker": conformance.Rel("ModuleWorker", w.Metadata.Name),
			"versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", app.Version.Metadata.Name)}}}
		return spec, spec, nil
	}},
	{what: "two consumers of one queue", kind: "QueueConsumer", setup: func(ctx context.Context, e *conformance.Env) (map[string]any, map[string]any, error) {
		app, err := e.DeployApp(ctx, e.A1, "queue")
		if err != nil {
			return nil, nil, err
		}
		q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), queueSpec(3600))
		if err != nil {
			return nil, nil, err
		}
		spec := queueConsumerSpec(app.Worker.Metadata.Name, q.Metadata.Name)
		return spec, spec, nil
	}},
	{what: "one hostname twice", kind: "WorkerCustomDomain", setup: func(ctx context.Context, e *conformance.Env) (map[string]any, map[string]any, error) {
		one, err := e.DeployApp(ctx, e.A1, "fetch")
		if err != nil {
			return nil, nil, err
		}
		two, err := e.DeployApp(ctx, e.A1, "fetch")
		if err != nil {
			return nil, nil, err
		}
		var raw [5]byte
		_, _ = rand.Read(raw[:])
		host := "race-" + hex.EncodeToString(raw[:]) + ".example.com"
		return map[string]any{"worker": conformance.Rel("ModuleWorker", one.Worker.Metadata.Name), "hostname": host},
			map[string]any{"worker": conformance.Rel("ModuleWorker", two.Worker.Metadata.Name), "hostname": host}, nil
	}},
}

// TestConflictingCreatesAtTwoReplicasAdmitOne sends, at the same moment,
// two creates that the worker aggregate and claim rules forbid together
// (spec/host-api-v1alpha3.md §6.5) — one through replica A, one through
// replica B, under different names — several rounds each: exactly one is
// admitted, the other is refused and absent afterwards.
func TestConflictingCreatesAtTwoReplicasAdmitOne(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{})
	ctx := context.Background()
	const rounds = 4
	for _, c := range conflicts {
		t.Run(c.kind, func(t *testing.T) {
			for round := 0; round < rounds; round++ {
				specA, specB, err := c.setup(ctx, f.proxy)
				if err != nil {
					t.Fatal(err)
				}
				sides := []struct {
					e    *conformance.Env
					spec map[string]any
				}{{f.replica(0), specA}, {f.replica(1), specB}}
				reqs := make([]wire.ResourceRequest, 2)
				bodies := make([][]byte, 2)
				for i, s := range sides {
					r, err := s.e.Request(c.kind, s.e.Name("rival"), s.spec)
					if err != nil {
						t.Fatal(err)
					}
					if bodies[i], err = prepared(ctx, s.e, r, nil); err != nil {
						t.Fatalf("prepare %s: %v", c.what, err)
					}
					reqs[i] = r
				}
				answers := make([]*conformance.Raw, 2)
				errs := make([]error, 2)
				together(
					func() { answers[0], errs[0] = putApply(ctx, sides[0].e, reqs[0], bodies[0], newKey(), "", "") },
					func() { answers[1], errs[1] = putApply(ctx, sides[1].e, reqs[1], bodies[1], newKey(), "", "") },
				)
				admitted := 0
				for i := range answers {
					if errs[i] != nil {
						t.Fatal(errs[i])
					}
					_, err := f.proxy.A1.Read(ctx, client.Address{Space: f.proxy.Space, Ref: reqs[i].Form.FormRef, Name: reqs[i].Metadata.Name})
					switch {
					case answers[i].Status == 201 && err == nil:
						admitted++
					case answers[i].Status >= 400 && client.IsNotFound(err):
					default:
						t.Fatalf("round %d, %s: side %d answered %d %s; read afterwards: %v", round, c.what, i, answers[i].Status, answers[i].Body, err)
					}
				}
				if admitted != 1 {
					t.Fatalf("round %d, %s at the same moment: %d admitted (A: %d %s; B: %d %s), want exactly 1",
						round, c.what, admitted, answers[0].Status, answers[0].Body, answers[1].Status, answers[1].Body)
				}
			}
		})
	}
}
