package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "worker-endpoint-address-is-host-assigned", Group: "edge", Summary: "a WorkerEndpoint's outputs are a host-assigned canonical hostname and https://hostname/; the spec stays the worker alone", Run: endpointHostAssigned},
		Check{ID: "worker-endpoint-single-per-worker", Group: "edge", Summary: "a worker has at most one WorkerEndpoint", Run: endpointSinglePerWorker},
		Check{ID: "worker-endpoint-follows-the-active-deployment", Group: "edge", Summary: "an endpoint depends on the deployment serving it and keeps its address and readiness across promotion", Run: endpointFollowsDeployment},
		Check{ID: "worker-endpoint-address-is-stable-for-its-uid", Group: "edge", Summary: "observe, re-apply and deployment changes keep an endpoint's address; another worker's endpoint gets another", Run: endpointStableForUID},
	)
}

// edgeHostnamePattern is the canonical DNS name of WorkerEndpoint's
// declared hostname output.
var edgeHostnamePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$`)

// edgeEndpointAddress reads and checks an endpoint's outputs: exactly
// hostname and url, hostname canonical, url = https://hostname/.
func edgeEndpointAddress(res *wire.Resource, what string) (string, error) {
	if len(res.Status.Outputs) == 0 {
		return "", fmt.Errorf("%s publishes no status.outputs", what)
	}
	var out map[string]any
	if err := json.Unmarshal(res.Status.Outputs, &out); err != nil {
		return "", fmt.Errorf("%s status.outputs is not an object: %v", what, err)
	}
	h, _ := out["hostname"].(string)
	u, _ := out["url"].(string)
	if len(out) != 2 || h == "" || u == "" {
		return "", fmt.Errorf("%s status.outputs = %s; want exactly the strings hostname and url", what, res.Status.Outputs)
	}
	if len(h) > 253 || !edgeHostnamePattern.MatchString(h) {
		return "", fmt.Errorf("%s hostname %q is not a canonical DNS name (lowercase, no trailing dot)", what, h)
	}
	if u != "https://"+h+"/" {
		return "", fmt.Errorf("%s url %q is not https:// + hostname %q + /", what, u, h)
	}
	return h, nil
}

func endpointHostAssigned(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	// The address is not the author's to choose: the spec is closed.
	req, err := e.Request("WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", wn), "hostname": "chosen.example.com"})
	if err != nil {
		return err
	}
	if v, err := e.A1.Validate(ctx, req); err != nil || v.Valid {
		return fmt.Errorf("validate of an endpoint naming its own hostname: %v %+v; want valid:false", err, v)
	}
	name := e.Name("endpoint")
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", name, map[string]any{"worker": e.Rel("ModuleWorker", wn)})
	if err != nil {
		return fmt.Errorf("an endpoint on a worker serving fetch: %w", err)
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(ep.Spec, &spec); err != nil || len(spec) != 1 || edgeRelName(ep, "worker") != wn {
		return fmt.Errorf("the stored endpoint spec is %s; the address is status, the spec stays the worker alone", ep.Spec)
	}
	h, err := edgeEndpointAddress(ep, "the created endpoint")
	if err != nil {
		return err
	}
	if strings.Contains(h, name) {
		return fmt.Errorf("the assigned hostname %q decorates the resource name %q; the host assigns it", h, name)
	}
	got, err := e.edgeRead(ctx, e.A1, ep)
	if err != nil {
		return err
	}
	rh, err := edgeEndpointAddress(got, "the endpoint on read")
	if err != nil {
		return err
	}
	if rh != h {
		return fmt.Errorf("the address moved between apply (%s) and read (%s)", h, rh)
	}
	return nil
}

func endpointSinglePerWorker(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	spec := map[string]any{"worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name)}
	first, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), spec)
	if err != nil {
		return err
	}
	name := e.Name("endpoint")
	_, err = e.edgeTryCreate(ctx, "WorkerEndpoint", name, spec)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("a second endpoint of one worker: %w", err)
	}
	if err := e.edgeAbsent(ctx, e.A1, e.Space, "WorkerEndpoint", name); err != nil {
		return err
	}
	_, err = e.edgeImport(ctx, e.A1, e.Space, "WorkerEndpoint", name, spec)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("importing a second endpoint of one worker: %w", err)
	}
	if _, err := e.Update(ctx, e.A1, first, spec); err != nil {
		return fmt.Errorf("re-applying the worker's one endpoint: %w", err)
	}
	if err := e.Delete(ctx, e.A1, first); err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), spec); err != nil {
		return fmt.Errorf("an endpoint once the first was deleted: %w", err)
	}
	return nil
}

func endpointFollowsDeployment(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", wn)})
	if err != nil {
		return err
	}
	before, err := edgeEndpointAddress(ep, "the endpoint before promotion")
	if err != nil {
		return err
	}
	err = e.edgeTryDelete(ctx, e.A1, e.Creds.A1, a.Deployment, nil)
	if err := edgeRefused(err, wire.DependencyInUse); err != nil {
		return fmt.Errorf("deleting the deployment serving a live endpoint: %w", err)
	}
	fetch := []string{"fetch"}
	v2, err := e.edgeVersion(ctx, e.A1, e.Space, wn, fetch, fetch, nil)
	if err != nil {
		return err
	}
	d, err := e.Update(ctx, e.A1, a.Deployment, e.edgeDeploymentSpec(wn, edgeWeighted{v2.Metadata.Name, 10000}))
	if err != nil {
		return fmt.Errorf("promoting the endpoint's worker to a second version: %w", err)
	}
	after, err := e.edgeRead(ctx, e.A1, ep)
	if err != nil {
		return err
	}
	h, err := edgeEndpointAddress(after, "the endpoint after promotion")
	if err != nil {
		return err
	}
	if h != before {
		return fmt.Errorf("promotion moved the endpoint's address %s -> %s", before, h)
	}
	if c := edgeReady(after); c.Status != "True" {
		return fmt.Errorf("the endpoint reports Ready=%s/%s after its worker was promoted", c.Status, c.Reason)
	}
	if after.Metadata.Generation != ep.Metadata.Generation {
		return fmt.Errorf("promotion moved the endpoint's generation %s -> %s", ep.Metadata.Generation, after.Metadata.Generation)
	}
	sched := []string{"scheduled"}
	v3, err := e.edgeVersion(ctx, e.A1, e.Space, wn, sched, sched, nil)
	if err != nil {
		return err
	}
	_, err = e.edgeTryUpdate(ctx, d, e.edgeDeploymentSpec(wn, edgeWeighted{v3.Metadata.Name, 10000}))
	if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
		return fmt.Errorf("moving the endpoint's traffic to a version without fetch: %w", err)
	}
	if err := e.Delete(ctx, e.A1, ep); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, d); err != nil {
		return fmt.Errorf("deleting the deployment once its endpoint is gone: %w", err)
	}
	return nil
}

func endpointStableForUID(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	spec := map[string]any{"worker": e.Rel("ModuleWorker", wn)}
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), spec)
	if err != nil {
		return err
	}
	h, err := edgeEndpointAddress(ep, "the created endpoint")
	if err != nil {
		return err
	}
	same := func(step string, res *wire.Resource) error {
		if res.Metadata.UID != ep.Metadata.UID {
			return fmt.Errorf("after %s the endpoint is uid %s, not %s", step, res.Metadata.UID, ep.Metadata.UID)
		}
		got, err := edgeEndpointAddress(res, "the endpoint after "+step)
		if err != nil {
			return err
		}
		if got != h {
			return fmt.Errorf("after %s the endpoint's address moved %s -> %s", step, h, got)
		}
		return nil
	}
	obs, err := e.A1.Observe(ctx, Addr(ep), client.Precondition{Generation: ep.Metadata.Generation, UID: ep.Metadata.UID})
	if err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	if err := same("observe", obs); err != nil {
		return err
	}
	again, err := e.Update(ctx, e.A1, ep, spec)
	if err != nil {
		return fmt.Errorf("re-apply: %w", err)
	}
	if err := same("a re-apply", again); err != nil {
		return err
	}
	fetch := []string{"fetch"}
	v2, err := e.edgeVersion(ctx, e.A1, e.Space, wn, fetch, fetch, nil)
	if err != nil {
		return err
	}
	if _, err := e.Update(ctx, e.A1, a.Deployment, e.edgeDeploymentSpec(wn, edgeWeighted{a.Version.Metadata.Name, 5000}, edgeWeighted{v2.Metadata.Name, 5000})); err != nil {
		return fmt.Errorf("deployment change: %w", err)
	}
	read, err := e.edgeRead(ctx, e.A1, ep)
	if err != nil {
		return err
	}
	if err := same("a deployment change", read); err != nil {
		return err
	}
	b, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	other, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", b.Worker.Metadata.Name)})
	if err != nil {
		return err
	}
	oh, err := edgeEndpointAddress(other, "the second worker's endpoint")
	if err != nil {
		return err
	}
	if oh == h {
		return fmt.Errorf("two workers' endpoints share the address %s", h)
	}
	return nil
}
