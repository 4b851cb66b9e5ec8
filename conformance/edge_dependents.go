package conformance

import (
	"context"
	"fmt"
	"strconv"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "deployment-change-preserves-dependents", Group: "edge", Summary: "a deployment change that would strand an attachment or inbound service binding is unsupported_capability", Run: deploymentPreservesDependents},
		Check{ID: "deployment-delete-blocked-by-dependent", Group: "edge", Summary: "deleting a deployment while an attachment of its worker lives is dependency_in_use naming it", Run: deploymentDeleteBlockedByDependent},
		Check{ID: "deployment-delete-blocked-by-inbound-binding", Group: "edge", Summary: "deleting a deployment while another worker's version binds the worker as a service is dependency_in_use", Run: deploymentDeleteBlockedByInbound},
		Check{ID: "dependent-revision-advances-with-rendering", Group: "edge", Summary: "a worker's readiness rendered from its deployment moves its revision, never its generation", Run: dependentRevisionAdvances},
		Check{ID: "delete-fence-survives-derived-rendering", Group: "edge", Summary: "a delete fenced on generation succeeds after teardown moved the revision; If-Match is never required", Run: deleteFenceSurvivesRendering},
	)
}

// edgeServiceCaller creates a worker whose version binds target as a
// service under the binding name API.
func (e *Env) edgeServiceCaller(ctx context.Context, target string) (*wire.Resource, error) {
	caller, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("caller"), map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("create caller worker: %w", err)
	}
	fetch := []string{"fetch"}
	return e.edgeVersion(ctx, e.A1, e.Space, caller.Metadata.Name, fetch, fetch, map[string]any{
		"serviceBindings": []any{map[string]any{"name": "API", "resource": e.Rel("ModuleWorker", target)}},
	})
}

func deploymentPreservesDependents(ctx context.Context, e *Env) error {
	all := []string{"fetch", "scheduled", "queue"}
	a, err := e.DeployApp(ctx, e.A1, all...)
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	att := map[string]*wire.Resource{}
	for _, kind := range []string{"WorkerCronTrigger", "QueueConsumer", "WorkerEndpoint"} {
		if att[kind], err = e.Create(ctx, e.A1, kind, e.Name("att"), e.edgeAttachmentSpec(kind, wn, q.Metadata.Name)); err != nil {
			return fmt.Errorf("create %s: %w", kind, err)
		}
	}
	vFetch, err := e.edgeVersion(ctx, e.A1, e.Space, wn, []string{"fetch"}, []string{"fetch"}, nil)
	if err != nil {
		return err
	}
	noFetch := []string{"scheduled", "queue"}
	vNoFetch, err := e.edgeVersion(ctx, e.A1, e.Space, wn, noFetch, noFetch, nil)
	if err != nil {
		return err
	}
	d := a.Deployment
	refuse := func(what string, spec map[string]any) error {
		_, err := e.edgeTryUpdate(ctx, d, spec)
		if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		got, err := e.edgeRead(ctx, e.A1, d)
		if err != nil {
			return err
		}
		if got.Metadata.Generation != d.Metadata.Generation {
			return fmt.Errorf("%s was refused but moved the deployment's generation %s -> %s", what, d.Metadata.Generation, got.Metadata.Generation)
		}
		return nil
	}
	if err := refuse("moving all traffic to a fetch-only version under a live cron trigger and queue consumer",
		e.edgeDeploymentSpec(wn, edgeWeighted{vFetch.Metadata.Name, 10000})); err != nil {
		return err
	}
	if err := refuse("splitting traffic with a fetch-only version (every weighted version must serve the cron trigger)",
		e.edgeDeploymentSpec(wn, edgeWeighted{a.Version.Metadata.Name, 5000}, edgeWeighted{vFetch.Metadata.Name, 5000})); err != nil {
		return err
	}
	if err := refuse("moving all traffic to a version without fetch under a live endpoint",
		e.edgeDeploymentSpec(wn, edgeWeighted{vNoFetch.Metadata.Name, 10000})); err != nil {
		return err
	}
	caller, err := e.edgeServiceCaller(ctx, wn)
	if err != nil {
		return fmt.Errorf("a service binding to a worker serving fetch: %w", err)
	}
	for _, kind := range []string{"WorkerCronTrigger", "QueueConsumer"} {
		if err := e.Delete(ctx, e.A1, att[kind]); err != nil {
			return fmt.Errorf("delete %s: %w", kind, err)
		}
	}
	if d, err = e.Update(ctx, e.A1, d, e.edgeDeploymentSpec(wn, edgeWeighted{vFetch.Metadata.Name, 10000})); err != nil {
		return fmt.Errorf("a fetch-only version once only fetch dependents remain: %w", err)
	}
	if err := e.Delete(ctx, e.A1, att["WorkerEndpoint"]); err != nil {
		return fmt.Errorf("delete endpoint: %w", err)
	}
	if err := refuse("moving all traffic to a version without fetch under a live inbound service binding",
		e.edgeDeploymentSpec(wn, edgeWeighted{vNoFetch.Metadata.Name, 10000})); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, caller); err != nil {
		return fmt.Errorf("delete the calling version: %w", err)
	}
	if _, err := e.Update(ctx, e.A1, d, e.edgeDeploymentSpec(wn, edgeWeighted{vNoFetch.Metadata.Name, 10000})); err != nil {
		return fmt.Errorf("a version without fetch once nothing needs fetch: %w", err)
	}
	return nil
}

func deploymentDeleteBlockedByDependent(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch", "scheduled", "queue")
	if err != nil {
		return err
	}
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	for _, kind := range []string{"WorkerEndpoint", "WorkerCustomDomain", "WorkerCronTrigger", "QueueConsumer"} {
		att, err := e.Create(ctx, e.A1, kind, e.Name("att"), e.edgeAttachmentSpec(kind, a.Worker.Metadata.Name, q.Metadata.Name))
		if err != nil {
			return fmt.Errorf("create %s: %w", kind, err)
		}
		err = e.edgeTryDelete(ctx, e.A1, e.Creds.A1, a.Deployment, nil)
		if err := edgeRefused(err, wire.DependencyInUse); err != nil {
			return fmt.Errorf("deleting the deployment under a live %s: %w", kind, err)
		}
		if err := edgeMentions(err, att.Metadata.Name); err != nil {
			return fmt.Errorf("the refusal must name the dependent %s: %w", kind, err)
		}
		if err := e.Delete(ctx, e.A1, att); err != nil {
			return fmt.Errorf("delete %s: %w", kind, err)
		}
	}
	if err := e.Delete(ctx, e.A1, a.Deployment); err != nil {
		return fmt.Errorf("deleting the deployment once its dependents are gone: %w", err)
	}
	return nil
}

func deploymentDeleteBlockedByInbound(ctx context.Context, e *Env) error {
	target, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("target"), map[string]any{})
	if err != nil {
		return err
	}
	tn := target.Metadata.Name
	if _, err := e.edgeServiceCaller(ctx, tn); edgeRefused(err, wire.UnsupportedCapability) != nil {
		return fmt.Errorf("a service binding to a worker with no deployment: %w", edgeRefused(err, wire.UnsupportedCapability))
	}
	fetch := []string{"fetch"}
	v, err := e.edgeVersion(ctx, e.A1, e.Space, tn, fetch, fetch, nil)
	if err != nil {
		return err
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(tn, edgeWeighted{v.Metadata.Name, 10000}))
	if err != nil {
		return err
	}
	if e.Probe {
		// A deployment an accepted delete targets is being removed (spec/host-api-v1alpha3.md §4).
		op, err := e.edgeAcceptDelete(ctx, d)
		if err != nil {
			return err
		}
		if _, err := e.edgeServiceCaller(ctx, tn); edgeRefused(err, wire.UnsupportedCapability) != nil {
			return e.edgeRaceLost(ctx, op, fmt.Errorf("a service binding to a worker whose deployment an accepted delete targets: %w", edgeRefused(err, wire.UnsupportedCapability)))
		}
		if _, err := e.A1.WaitOperation(ctx, op); err != nil {
			return fmt.Errorf("the accepted delete of the deployment: %w", err)
		}
		if d, err = e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(tn, edgeWeighted{v.Metadata.Name, 10000})); err != nil {
			return err
		}
	}
	caller, err := e.edgeServiceCaller(ctx, tn)
	if err != nil {
		return fmt.Errorf("a service binding to a worker serving fetch: %w", err)
	}
	err = e.edgeTryDelete(ctx, e.A1, e.Creds.A1, d, nil)
	if err := edgeRefused(err, wire.DependencyInUse); err != nil {
		return fmt.Errorf("deleting the deployment of a worker another worker's version binds: %w", err)
	}
	if err := edgeMentions(err, caller.Metadata.Name); err != nil {
		return fmt.Errorf("the refusal must name the calling version: %w", err)
	}
	if err := e.Delete(ctx, e.A1, caller); err != nil {
		return fmt.Errorf("delete the calling version: %w", err)
	}
	if err := e.Delete(ctx, e.A1, d); err != nil {
		return fmt.Errorf("deleting the deployment once no version binds the worker: %w", err)
	}
	return nil
}

// edgeRevision parses a resource's revision.
func edgeRevision(res *wire.Resource) int64 {
	n, _ := strconv.ParseInt(res.Metadata.Revision, 10, 64)
	return n
}

func dependentRevisionAdvances(ctx context.Context, e *Env) error {
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	wn := w.Metadata.Name
	fetch, sched := []string{"fetch"}, []string{"scheduled"}
	v1, err := e.edgeVersion(ctx, e.A1, e.Space, wn, fetch, fetch, nil)
	if err != nil {
		return err
	}
	v2, err := e.edgeVersion(ctx, e.A1, e.Space, wn, sched, sched, nil)
	if err != nil {
		return err
	}
	prev, err := e.edgeRead(ctx, e.A1, w)
	if err != nil {
		return err
	}
	expect := func(step, reason string, moved bool) error {
		cur, err := e.edgeRead(ctx, e.A1, w)
		if err != nil {
			return err
		}
		if cur.Metadata.Generation != w.Metadata.Generation {
			return fmt.Errorf("after %s the worker's generation moved %s -> %s; a rendering never moves the generation", step, w.Metadata.Generation, cur.Metadata.Generation)
		}
		switch c := edgeReady(cur); {
		case reason == "Available" && (c.Status != "True" || c.Reason != reason):
			return fmt.Errorf("after %s the worker reports Ready=%s/%s, want True/Available", step, c.Status, c.Reason)
		case reason != "Available" && (c.Status != "False" || c.Reason != reason):
			return fmt.Errorf("after %s the worker reports Ready=%s/%s, want False/%s", step, c.Status, c.Reason, reason)
		}
		if moved && edgeRevision(cur) <= edgeRevision(prev) {
			return fmt.Errorf("after %s the worker's rendering changed but its revision stayed %s", step, cur.Metadata.Revision)
		}
		if !moved && cur.Metadata.Revision != prev.Metadata.Revision {
			return fmt.Errorf("after %s nothing about the worker changed but its revision moved %s -> %s", step, prev.Metadata.Revision, cur.Metadata.Revision)
		}
		prev = cur
		return nil
	}
	if err := expect("creating it without a deployment", "Provisioning", false); err != nil {
		return err
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(wn, edgeWeighted{v1.Metadata.Name, 10000}))
	if err != nil {
		return err
	}
	if err := expect("deploying a fetch version", "Available", true); err != nil {
		return err
	}
	if d, err = e.Update(ctx, e.A1, d, e.edgeDeploymentSpec(wn, edgeWeighted{v2.Metadata.Name, 10000})); err != nil {
		return err
	}
	if err := expect("deploying a version without fetch", "UnsupportedCapability", true); err != nil {
		return err
	}
	if d, err = e.Update(ctx, e.A1, d, e.edgeDeploymentSpec(wn, edgeWeighted{v2.Metadata.Name, 10000})); err != nil {
		return err
	}
	if err := expect("re-applying the same deployment", "UnsupportedCapability", false); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, d); err != nil {
		return err
	}
	return expect("deleting the deployment", "Provisioning", true)
}

func deleteFenceSurvivesRendering(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	before, err := e.edgeRead(ctx, e.A1, a.Worker)
	if err != nil {
		return err
	}
	for _, r := range []*wire.Resource{a.Deployment, a.Version, a.Bundle} {
		if err := e.Delete(ctx, e.A1, r); err != nil {
			return fmt.Errorf("teardown: delete %s: %w", r.Kind, err)
		}
	}
	after, err := e.edgeRead(ctx, e.A1, a.Worker)
	if err != nil {
		return err
	}
	if after.Metadata.Generation != before.Metadata.Generation || edgeRevision(after) <= edgeRevision(before) {
		return fmt.Errorf("tearing down the deployment must move the worker's revision (its readiness changed) and not its generation: generation %s -> %s, revision %s -> %s",
			before.Metadata.Generation, after.Metadata.Generation, before.Metadata.Revision, after.Metadata.Revision)
	}
	// An If-Match the client sends is honoured…
	err = e.edgeTryDelete(ctx, e.A1, e.Creds.A1, before, map[string]string{"If-Match": `"` + before.Metadata.Revision + `"`})
	if err := edgeRefused(err, wire.RevisionConflict); err != nil {
		return fmt.Errorf("a delete with the pre-teardown If-Match: %w", err)
	}
	// …but never required: the generation the client recorded before the
	// teardown still deletes.
	if err := e.Delete(ctx, e.A1, before); err != nil {
		return fmt.Errorf("delete fenced on the generation recorded before teardown (no If-Match): %w", err)
	}
	return e.edgeAbsent(ctx, e.A1, e.Space, "ModuleWorker", a.Worker.Metadata.Name)
}
