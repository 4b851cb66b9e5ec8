package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "revision-role-update-rejected", Group: "lifecycle", Summary: "any apply to an existing revision-role resource is invalid_argument, even spec-identical", Run: revisionRoleUpdateRejected},
		Check{ID: "no-update-spec-change-rejected", Group: "lifecycle", Summary: "a spec change to a Form without update is invalid_argument; a spec-identical apply is accepted", Run: noUpdateSpecChangeRejected},
		Check{ID: "form-declared-outputs-are-exact", Group: "lifecycle", Summary: "declared outputs are exactly the declared members; Forms without outputs omit status.outputs", Run: formDeclaredOutputsExact},
	)
}

// lcSpecOf decodes a resource's spec.
func lcSpecOf(res *wire.Resource) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(res.Spec, &m); err != nil {
		return nil, fmt.Errorf("%s %q spec: %v", res.Kind, res.Metadata.Name, err)
	}
	return m, nil
}

func revisionRoleUpdateRejected(ctx context.Context, e *Env) error {
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	a := &App{Worker: w}
	if err := e.AddVersion(ctx, e.A1, a, "fetch"); err != nil {
		return err
	}
	for _, res := range []*wire.Resource{a.Bundle, a.Version} {
		spec, err := lcSpecOf(res)
		if err != nil {
			return err
		}
		_, err = e.Update(ctx, e.A1, res, spec)
		if err := ExpectCode(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a spec-identical apply to an existing %s: %w", res.Kind, err)
		}
		if res.Kind == "WorkerVersion" {
			spec["vars"] = map[string]any{"MODE": "changed"}
			_, err = e.Update(ctx, e.A1, res, spec)
			if err := ExpectCode(err, wire.InvalidArgument); err != nil {
				return fmt.Errorf("a spec-changing apply to an existing %s: %w", res.Kind, err)
			}
		}
		if err := e.lcUnchanged(ctx, res, "refused applies to a revision"); err != nil {
			return err
		}
	}
	return nil
}

func noUpdateSpecChangeRejected(ctx context.Context, e *Env) error {
	ref, err := e.Ref("WorkerCustomDomain")
	if err != nil {
		return err
	}
	f, err := e.A1.Forms(ctx, e.Space, ref)
	if err != nil {
		return err
	}
	if len(f.Forms) != 1 || slices.Contains(f.Forms[0].Operations, "update") {
		return fmt.Errorf("forms for WorkerCustomDomain %s answered %+v; the Form declares no update", ref, f.Forms)
	}
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	host := func() string { return "conformance-" + randomHex(6) + ".example.com" }
	worker := e.Rel("ModuleWorker", a.Worker.Metadata.Name)
	res, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), map[string]any{"hostname": host(), "worker": worker})
	if err != nil {
		return err
	}
	_, err = e.Update(ctx, e.A1, res, map[string]any{"hostname": host(), "worker": worker})
	if err := ExpectCode(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("a hostname change to a WorkerCustomDomain: %w", err)
	}
	if err := e.lcUnchanged(ctx, res, "a refused spec change"); err != nil {
		return err
	}
	spec, err := lcSpecOf(res)
	if err != nil {
		return err
	}
	got, err := e.Update(ctx, e.A1, res, spec)
	if err != nil {
		return fmt.Errorf("a spec-identical apply to a Form without update: %w", err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation {
		return fmt.Errorf("a spec-identical apply answered uid %s generation %s", got.Metadata.UID, got.Metadata.Generation)
	}
	return nil
}

// lcStatusMembers reads a resource raw and returns its status members.
func (e *Env) lcStatusMembers(ctx context.Context, res *wire.Resource) (map[string]json.RawMessage, error) {
	r, err := e.lcRead(ctx, e.Creds.A1, Addr(res))
	if err != nil {
		return nil, err
	}
	if _, err := r.lcResource(http.StatusOK); err != nil {
		return nil, fmt.Errorf("read %s %q: %w", res.Kind, res.Metadata.Name, err)
	}
	var doc struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		return nil, err
	}
	return doc.Status, nil
}

func formDeclaredOutputsExact(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name)})
	if err != nil {
		return err
	}
	st, err := e.lcStatusMembers(ctx, ep)
	if err != nil {
		return err
	}
	raw, ok := st["outputs"]
	if !ok {
		return fmt.Errorf("WorkerEndpoint status has no outputs; it declares hostname and url")
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("WorkerEndpoint outputs %s: %v", raw, err)
	}
	hostname, _ := out["hostname"].(string)
	url, _ := out["url"].(string)
	if len(out) != 2 || hostname == "" || url == "" {
		return fmt.Errorf("WorkerEndpoint outputs %s; want exactly the strings hostname and url", raw)
	}
	if hostname != strings.ToLower(hostname) || strings.HasSuffix(hostname, ".") || url != "https://"+hostname+"/" {
		return fmt.Errorf("WorkerEndpoint outputs hostname %q url %q; want a canonical hostname and url https://<hostname>/", hostname, url)
	}
	if ep.Status.Outputs == nil || string(ep.Status.Outputs) != string(raw) {
		return fmt.Errorf("the create answered outputs %s, the read %s", ep.Status.Outputs, raw)
	}
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	for _, res := range []*wire.Resource{a.Worker, a.Bundle, a.Version, a.Deployment, q} {
		st, err := e.lcStatusMembers(ctx, res)
		if err != nil {
			return err
		}
		if o, ok := st["outputs"]; ok {
			return fmt.Errorf("%s declares no outputs but its status carries outputs %s", res.Kind, o)
		}
	}
	return nil
}
