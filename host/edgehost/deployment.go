package edgehost

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// checkDeployment applies the worker aggregate rules (spec/host-api-v1alpha3.md §6.5): one
// deployment per worker; versions of this worker, Ready and not being
// deleted; and the reverse gate for live dependents. Each version once is
// edge.CheckDeploymentVersionNames, which checkAggregate ran before.
func checkDeployment(tx store.Tx, res *store.Resource, spec map[string]any) error {
	w, err := lookup(tx, key(res, ModuleWorker, relName(spec, "worker")))
	if err != nil || w == nil {
		return err
	}
	ds, err := holders(tx, w, WorkerDeployment)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.UID != res.UID {
			return errorf(wire.InvalidArgument, "deployment_exists", "ModuleWorker %q already has WorkerDeployment %q; a worker has one deployment: update it instead", w.Name, d.Name)
		}
	}
	for i, v := range asList(spec["versions"]) {
		name := relName(ijson.As[map[string]any](v), "workerVersion")
		ver, err := lookup(tx, key(res, WorkerVersion, name))
		if err != nil || ver == nil {
			return err
		}
		ownerName, err := relTarget(ver, "worker")
		if err != nil {
			return err
		}
		owner, err := lookup(tx, key(res, ModuleWorker, ownerName))
		if err != nil {
			return err
		}
		if owner == nil || owner.UID != w.UID {
			return errorf(wire.InvalidArgument, "deployment_version_foreign", "versions/%d: WorkerVersion %q belongs to another worker, not ModuleWorker %q", i, name, w.Name)
		}
		if op, err := tx.PendingOperationFor(ver.Key); err == nil && op.Action == store.ActionDelete {
			return errorf(wire.InvalidArgument, "deployment_version_deleting", "versions/%d: WorkerVersion %q is being deleted", i, name)
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if ok, err := ready(ver); err != nil {
			return err
		} else if !ok {
			return errorf(wire.InvalidArgument, "deployment_version_unready", "versions/%d: WorkerVersion %q is not Ready", i, name)
		}
	}
	served, err := versionsHandlers(tx, res, spec)
	if err != nil {
		return err
	}
	return reverseGate(tx, w, served)
}

// reverseGate refuses a handler set that would strand a live attachment or
// an inbound service binding of the worker (spec/host-api-v1alpha3.md §6.5).
func reverseGate(tx store.Tx, w *store.Resource, served []string) error {
	deps, err := dependents(tx, w)
	if err != nil {
		return err
	}
	for _, d := range deps {
		if !contains(served, d.need) {
			return errorf(wire.UnsupportedCapability, "deployment_strands_dependent", "the new versions would not serve %s, which %s needs; keep %s in every version or remove the dependent first", d.need, d.what, d.need)
		}
	}
	return nil
}

type dependent struct{ what, need string }

// dependents lists what a worker's deployment serves: attachments (by
// their handler) and inbound service bindings (fetch).
func dependents(tx store.Tx, w *store.Resource) ([]dependent, error) {
	pins, err := tx.PinsTo(w.UID)
	if err != nil {
		return nil, err
	}
	var out []dependent
	seen := map[string]bool{}
	for _, p := range pins {
		src, err := tx.ResourceByUID(p.SourceUID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var need string
		if h, ok := edge.AttachmentHandler(src.Kind); ok && p.RelationPointer == "/worker" {
			need = h
		} else if src.Kind == WorkerVersion && strings.HasPrefix(p.RelationPointer, "/serviceBindings/") {
			need = edge.HandlerFetch
		} else {
			continue
		}
		what := src.Kind + " " + `"` + src.Name + `"`
		if !seen[what+need] {
			seen[what+need] = true
			out = append(out, dependent{what: what, need: need})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].what < out[j].what })
	return out, nil
}

func ready(r *store.Resource) (bool, error) {
	st, err := statusOf(r)
	for _, c := range st.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True", err
		}
	}
	return false, err
}

// CheckDelete refuses deleting a deployment while attachments or inbound
// service bindings of its worker live (spec/host-api-v1alpha3.md §3.4 (9)).
func (f *Family) CheckDelete(tx store.Tx, def *form.Definition, res *store.Resource) error {
	if kindOf(def) != WorkerDeployment {
		return nil
	}
	workerName, err := relTarget(res, "worker")
	if err != nil {
		return err
	}
	w, err := lookup(tx, key(res, ModuleWorker, workerName))
	if err != nil || w == nil {
		return err
	}
	deps, err := dependents(tx, w)
	if err != nil {
		return err
	}
	if len(deps) > 0 {
		names := make([]string, len(deps))
		for i, d := range deps {
			names[i] = d.what
		}
		return wire.Errorf(wire.DependencyInUse, "WorkerDeployment %q still serves %s; delete those first (teardown order: attachments and inbound callers, deployment, versions, bundle, worker)", res.Name, strings.Join(names, ", ")).
			WithHostCode("deployment_has_dependents").WithDetail("dependents", names)
	}
	return nil
}

// workerReadiness renders a ModuleWorker's Ready condition: about service
// (spec/host-api-v1alpha3.md §5.2).
func workerReadiness(tx store.Tx, w *store.Resource) (wire.Condition, error) {
	served, d, err := servedHandlers(tx, w)
	switch {
	case err != nil:
		return wire.Condition{}, err
	case d == nil:
		return wire.Condition{Type: "Ready", Status: "False", Reason: "Provisioning", Message: "no WorkerDeployment serves this worker yet",
			HostReason: hostReason("ModuleWorker " + strconv.Quote(w.Name) + " has no active WorkerDeployment")}, nil
	case !contains(served, edge.HandlerFetch):
		return wire.Condition{Type: "Ready", Status: "False", Reason: "UnsupportedCapability", Message: "WorkerDeployment " + d.Name + " has a version that does not export fetch",
			HostReason: hostReason("ModuleWorker " + strconv.Quote(w.Name) + ": WorkerDeployment " + strconv.Quote(d.Name) + " weights a version without fetch")}, nil
	}
	return wire.Condition{Type: "Ready", Status: "True", Reason: "Available"}, nil
}

// checkHostnameClaim: a canonical hostname is claimed once per tenant,
// across spaces (spec/host-api-v1alpha3.md §6.5) and across both Edge
// groups (one claim name for both, spec/lane-v1beta1.md §2.5 rule 7);
// other tenants' claims are invisible.
func checkHostnameClaim(tx store.Tx, res *store.Resource, spec map[string]any) error {
	h := ijson.As[string](spec["hostname"])
	uid, err := tx.ClaimHolder(res.Tenant, hostnameClaim(h))
	if errors.Is(err, store.ErrNotFound) || (err == nil && uid == res.UID) {
		return nil
	}
	if err != nil {
		return err
	}
	holder, err := tx.ResourceByUID(uid)
	if err != nil {
		return err
	}
	if holder.APIVersion != res.APIVersion { // the claim spans both Edge groups (spec/lane-v1beta1.md §2.5 rule 7)
		return errorf(wire.InvalidArgument, "hostname_claimed", "hostname %q is already claimed by %s WorkerCustomDomain %q in space %q of this tenant; one hostname has one holder across both Edge families", h, holder.APIVersion, holder.Name, holder.Space)
	}
	return errorf(wire.InvalidArgument, "hostname_claimed", "hostname %q is already claimed by WorkerCustomDomain %q in space %q of this tenant", h, holder.Name, holder.Space)
}

func hostnameClaim(h string) string { return "hostname:" + h }

// Persist records a custom domain's hostname claim and the manifest an
// artifact-backed revision references.
func (f *Family) Persist(tx store.Tx, def *form.Definition, res *store.Resource) error {
	if manifestKind(def) != "" { // the revision's manifest stays while the revision lives (retention sweep)
		digest, err := specString(res, "manifestDigest")
		if err != nil {
			return err
		}
		return tx.ReplaceArtifactRefs(store.ResourceHolder(res.UID), []string{digest})
	}
	if kindOf(def) != WorkerCustomDomain {
		return nil
	}
	h, err := specString(res, "hostname")
	if err != nil {
		return err
	}
	return tx.PutClaim(res.Tenant, hostnameClaim(h), res.UID)
}

// hostReason bounds a condition's hostReason to the wire schema's 256
// characters (spec/conformance-probe.md §4), cutting at a rune boundary.
func hostReason(s string) string {
	if r := []rune(s); len(r) > 256 {
		return string(r[:255]) + "…"
	}
	return s
}
