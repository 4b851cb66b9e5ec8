package conformance

import (
	"context"
	"fmt"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "deployment-weight-sum-enforced", Group: "edge", Summary: "deployment weights must sum to exactly 10000: the apply, import and update refuse any other sum (prepare answers a review)", Run: deploymentWeightSum},
		Check{ID: "deployment-single-active-per-worker", Group: "edge", Summary: "a worker has at most one WorkerDeployment; re-applying it is fine", Run: deploymentSinglePerWorker},
		Check{ID: "deployment-version-ownership", Group: "edge", Summary: "a deployment weights only versions of its own worker", Run: deploymentVersionOwnership},
		Check{ID: "deployment-version-duplicate-rejected", Group: "edge", Summary: "a deployment names each version once: the apply, import and update refuse a version named twice (prepare answers a review)", Run: deploymentVersionDuplicate},
	)
}

// edgeTwoVersions creates a worker with two fetch versions (no deployment).
func (e *Env) edgeTwoVersions(ctx context.Context) (worker, v1, v2 *wire.Resource, err error) {
	if worker, err = e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{}); err != nil {
		return nil, nil, nil, fmt.Errorf("create worker: %w", err)
	}
	fetch := []string{"fetch"}
	if v1, err = e.edgeVersion(ctx, e.A1, e.Space, worker.Metadata.Name, fetch, fetch, nil); err != nil {
		return nil, nil, nil, err
	}
	if v2, err = e.edgeVersion(ctx, e.A1, e.Space, worker.Metadata.Name, fetch, fetch, nil); err != nil {
		return nil, nil, nil, err
	}
	return worker, v1, v2, nil
}

func deploymentWeightSum(ctx context.Context, e *Env) error {
	w, v1, v2, err := e.edgeTwoVersions(ctx)
	if err != nil {
		return err
	}
	wn, n1, n2 := w.Metadata.Name, v1.Metadata.Name, v2.Metadata.Name
	for _, bad := range [][2]int{{5000, 4000}, {5000, 5001}, {1, 1}} {
		spec := edgeDeploymentSpec(wn, edgeWeighted{n1, bad[0]}, edgeWeighted{n2, bad[1]})
		if err := e.edgeAggregateRefused(ctx, "WorkerDeployment", spec, "weights sum to exactly 10000", fmt.Sprintf("weights %d+%d", bad[0], bad[1])); err != nil {
			return err
		}
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), edgeDeploymentSpec(wn, edgeWeighted{n1, 2500}, edgeWeighted{n2, 7500}))
	if err != nil {
		return fmt.Errorf("weights 2500+7500 (sum 10000) refused: %w", err)
	}
	_, err = e.Update(ctx, e.A1, d, edgeDeploymentSpec(wn, edgeWeighted{n1, 2500}, edgeWeighted{n2, 7499}))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("update to weights 2500+7499: %w", err)
	}
	got, err := e.edgeRead(ctx, e.A1, d)
	if err != nil {
		return err
	}
	if got.Metadata.Generation != d.Metadata.Generation {
		return fmt.Errorf("a refused update moved the deployment's generation %s -> %s", d.Metadata.Generation, got.Metadata.Generation)
	}
	if _, err := e.Update(ctx, e.A1, d, edgeDeploymentSpec(wn, edgeWeighted{n1, 10000})); err != nil {
		return fmt.Errorf("update to one version weighted 10000 refused: %w", err)
	}
	return nil
}

func deploymentSinglePerWorker(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn, vn := a.Worker.Metadata.Name, a.Version.Metadata.Name
	second := e.Name("deploy")
	_, err = e.Create(ctx, e.A1, "WorkerDeployment", second, edgeDeploymentSpec(wn, edgeWeighted{vn, 10000}))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("a second WorkerDeployment of one worker: %w", err)
	}
	if err := e.edgeAbsent(ctx, e.A1, e.Space, "WorkerDeployment", second); err != nil {
		return err
	}
	_, err = e.edgeImport(ctx, e.A1, e.Space, "WorkerDeployment", second, edgeDeploymentSpec(wn, edgeWeighted{vn, 10000}))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("importing a second WorkerDeployment of one worker: %w", err)
	}
	again, err := e.Update(ctx, e.A1, a.Deployment, edgeDeploymentSpec(wn, edgeWeighted{vn, 10000}))
	if err != nil {
		return fmt.Errorf("re-applying the worker's own deployment: %w", err)
	}
	if again.Metadata.Generation != a.Deployment.Metadata.Generation || again.Metadata.UID != a.Deployment.Metadata.UID {
		return fmt.Errorf("re-applying the same deployment moved generation %s -> %s", a.Deployment.Metadata.Generation, again.Metadata.Generation)
	}
	// Another worker's deployment is its own: the rule is per worker UID.
	b, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return fmt.Errorf("a deployment of another worker: %w", err)
	}
	// A deployment's worker is immutable: it is never moved to another
	// worker, which would give that worker a second (or first) deployment
	// nobody created for it.
	idle, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	fetch := []string{"fetch"}
	iv, err := e.edgeVersion(ctx, e.A1, e.Space, idle.Metadata.Name, fetch, fetch, nil)
	if err != nil {
		return err
	}
	for _, w := range []*App{b, {Worker: idle, Version: iv}} {
		_, err := e.edgeTryUpdate(ctx, a.Deployment, edgeDeploymentSpec(w.Worker.Metadata.Name, edgeWeighted{w.Version.Metadata.Name, 10000}))
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("re-pointing a deployment at worker %s (and its version): a deployment's worker is an immutable field, changed only by replacement, so the update must be refused: %w", w.Worker.Metadata.Name, err)
		}
	}
	// Once the first is gone the worker may have another (under a new
	// name: the refused create's answer is replayed to its own key).
	if err := e.Delete(ctx, e.A1, a.Deployment); err != nil {
		return fmt.Errorf("delete the first deployment: %w", err)
	}
	if _, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), edgeDeploymentSpec(wn, edgeWeighted{vn, 10000})); err != nil {
		return fmt.Errorf("a deployment after the first was deleted: %w", err)
	}
	return nil
}

func deploymentVersionOwnership(ctx context.Context, e *Env) error {
	w1, v1, _, err := e.edgeTwoVersions(ctx)
	if err != nil {
		return err
	}
	w2, foreign, _, err := e.edgeTwoVersions(ctx)
	if err != nil {
		return err
	}
	for _, spec := range []map[string]any{
		edgeDeploymentSpec(w1.Metadata.Name, edgeWeighted{foreign.Metadata.Name, 10000}),
		edgeDeploymentSpec(w1.Metadata.Name, edgeWeighted{v1.Metadata.Name, 5000}, edgeWeighted{foreign.Metadata.Name, 5000}),
	} {
		name := e.Name("deploy")
		_, err := e.Create(ctx, e.A1, "WorkerDeployment", name, spec)
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a deployment of worker %s weighting a version of worker %s: %w", w1.Metadata.Name, w2.Metadata.Name, err)
		}
		if err := e.edgeAbsent(ctx, e.A1, e.Space, "WorkerDeployment", name); err != nil {
			return err
		}
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), edgeDeploymentSpec(w1.Metadata.Name, edgeWeighted{v1.Metadata.Name, 10000}))
	if err != nil {
		return fmt.Errorf("a deployment of the worker's own version: %w", err)
	}
	_, err = e.Update(ctx, e.A1, d, edgeDeploymentSpec(w1.Metadata.Name, edgeWeighted{foreign.Metadata.Name, 10000}))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("updating a deployment to another worker's version: %w", err)
	}
	return nil
}

func deploymentVersionDuplicate(ctx context.Context, e *Env) error {
	w, v1, v2, err := e.edgeTwoVersions(ctx)
	if err != nil {
		return err
	}
	wn, n1, n2 := w.Metadata.Name, v1.Metadata.Name, v2.Metadata.Name
	dup := edgeDeploymentSpec(wn, edgeWeighted{n1, 4000}, edgeWeighted{n1, 6000})
	if err := e.edgeAggregateRefused(ctx, "WorkerDeployment", dup, "each version listed once", "a deployment naming version "+n1+" twice"); err != nil {
		return err
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), edgeDeploymentSpec(wn, edgeWeighted{n1, 4000}, edgeWeighted{n2, 6000}))
	if err != nil {
		return fmt.Errorf("a deployment of two distinct versions: %w", err)
	}
	_, err = e.Update(ctx, e.A1, d, edgeDeploymentSpec(wn, edgeWeighted{n2, 4000}, edgeWeighted{n2, 6000}))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("updating a deployment to name version %s twice: %w", n2, err)
	}
	return nil
}
