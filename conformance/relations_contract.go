package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "binding-contract-verified", Group: "relations", Summary: "a binding is verified against its contract: annotation, support profile, target Form and interface, name grammar", Run: bindingContractVerified},
		Check{ID: "relation-target-form-ref-verified", Group: "relations", Summary: "an exact-FormRef relation refuses a target recorded under another definition version", Run: relationTargetFormRef},
		Check{ID: "relation-target-interface-verified", Group: "relations", Summary: "a required-interface relation refuses a target whose Form does not provide it", Run: relationTargetInterface},
		Check{ID: "relation-pin-records-target-form-ref", Group: "relations", Summary: "a pin records the target's exact FormRef: a replacement under another contract is reported with both", Run: relationPinRecordsFormRef},
	)
}

// rxEdgeKVBinding is the Binding contract kvBindings carries (spec/host-api-v1alpha3.md §7.3).
const rxEdgeKVBinding, rxEdgeBindingVersion = "module-worker.edge-kv", "1.0.0"

func bindingContractVerified(ctx context.Context, e *Env) error {
	kvRef, other, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	vref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	// The served desired schema states the contract the list is verified
	// against, and the host profiles that contract.
	def, err := e.A1.FormDefinition(ctx, e.Space, vref)
	if err != nil {
		return err
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(def.DesiredSchema, &schema); err != nil {
		return fmt.Errorf("the served WorkerVersion desiredSchema: %w", err)
	}
	if got := schema.Properties["kvBindings"]["x-takoform-binding"]; got != rxEdgeKVBinding {
		return fmt.Errorf("the served kvBindings names binding contract %v, want %s", got, rxEdgeKVBinding)
	}
	p, err := e.A1.SupportBinding(ctx, rxEdgeKVBinding, rxEdgeBindingVersion)
	if err != nil {
		return fmt.Errorf("support profile of %s@%s: %w", rxEdgeKVBinding, rxEdgeBindingVersion, err)
	}
	if p.BindingRef == nil || p.BindingRef.Name != rxEdgeKVBinding || p.BindingRef.Version != rxEdgeBindingVersion {
		return fmt.Errorf("the support profile of %s@%s names %+v", rxEdgeKVBinding, rxEdgeBindingVersion, p.BindingRef)
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	kv, err := rxCreateAs(ctx, e, e.A1, kvRef, e.Name("kv"), map[string]any{})
	if err != nil {
		return err
	}
	type offender struct {
		what string
		spec map[string]any
	}
	badName := e.rxVersionSpec(a, kv.Metadata.Name)
	badName["kvBindings"].([]any)[0].(map[string]any)["name"] = "not-an-identifier"
	offenders := []offender{{"a binding name outside the contract's grammar", badName}}
	if other != (form.FormRef{}) {
		// Same group and kind, but its Form provides no edge.kv (rule 5).
		t, err := rxCreateAs(ctx, e, e.A1, other, e.Name("kv"), map[string]any{})
		if err != nil {
			return fmt.Errorf("create an EdgeKVNamespace under %s: %w", other, err)
		}
		offenders = append(offenders, offender{"a binding to a target whose Form provides no edge.kv", e.rxVersionSpec(a, t.Metadata.Name)})
	}
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return err
	}
	for _, p := range profiles.Profiles {
		if p.FormRef == nil || p.FormRef.Kind != "EdgeKVNamespace" || p.FormRef.APIVersion == e.Group {
			continue
		}
		// A Form outside allowedTargetForms (rule 4).
		t, err := rxCreateAs(ctx, e, e.A1, *p.FormRef, e.Name("kv"), map[string]any{})
		if err != nil {
			return fmt.Errorf("create an EdgeKVNamespace under %s: %w", p.FormRef, err)
		}
		spec := e.rxVersionSpec(a)
		spec["kvBindings"] = []any{map[string]any{"name": "CACHE", "resource": map[string]any{"apiVersion": p.FormRef.APIVersion, "kind": "EdgeKVNamespace", "name": t.Metadata.Name}}}
		offenders = append(offenders, offender{"a binding to " + p.FormRef.APIVersion + " EdgeKVNamespace", spec})
		break
	}
	if len(offenders) == 1 {
		return skipf("the host installs no EdgeKVNamespace outside the binding's contract to bind")
	}
	for _, o := range offenders {
		name := e.Name("version")
		_, err := e.Create(ctx, e.A1, "WorkerVersion", name, o.spec)
		if err := ExpectCode(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("%s: %w", o.what, err)
		}
		if err := rxAbsent(ctx, e, e.A1, vref, name, o.what); err != nil {
			return err
		}
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a, kv.Metadata.Name)); err != nil {
		return fmt.Errorf("a binding that satisfies its contract: %w", err)
	}
	return nil
}

func relationTargetFormRef(ctx context.Context, e *Env) error {
	legacy, err := rxOtherVersion(ctx, e, "ModuleWorker")
	if err != nil {
		return err
	}
	wref, _ := e.Ref("ModuleWorker")
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	v, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a))
	if err != nil {
		return err
	}
	lw, err := rxCreateAs(ctx, e, e.A1, legacy, e.Name("worker"), map[string]any{})
	if err != nil {
		return fmt.Errorf("create a ModuleWorker under %s: %w", legacy, err)
	}
	deploy := func(worker string) map[string]any {
		return map[string]any{"worker": e.Rel("ModuleWorker", worker),
			"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", v.Metadata.Name)}}}
	}
	// WorkerDeployment /worker requires the exact ModuleWorker FormRef.
	name := e.Name("deploy")
	_, err = e.Create(ctx, e.A1, "WorkerDeployment", name, deploy(lw.Metadata.Name))
	if err := rxRefusedWith(err, wire.InvalidArgument, "/worker", wref.SchemaDigest); err != nil {
		return fmt.Errorf("a deployment of a worker recorded under %s: %w", legacy.DefinitionVersion, err)
	}
	dref, _ := e.Ref("WorkerDeployment")
	if err := rxAbsent(ctx, e, e.A1, dref, name, "after a target of the wrong exact Form"); err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "WorkerDeployment", name, deploy(a.Worker.Metadata.Name)); err != nil {
		return fmt.Errorf("the same deployment of the family's worker: %w", err)
	}
	return nil
}

func relationTargetInterface(ctx context.Context, e *Env) error {
	kvRef, other, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	legacy, lerr := rxOtherVersion(ctx, e, "ModuleWorker")
	if other == (form.FormRef{}) && lerr != nil {
		return skipf("the host installs no second definition version of EdgeKVNamespace or ModuleWorker")
	}
	vref, _ := e.Ref("WorkerVersion")
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	refuse := func(what string, spec map[string]any, want ...string) error {
		name := e.Name("version")
		_, err := e.Create(ctx, e.A1, "WorkerVersion", name, spec)
		if err := rxRefusedWith(err, wire.InvalidArgument, want...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return rxAbsent(ctx, e, e.A1, vref, name, what)
	}
	if other != (form.FormRef{}) {
		t, err := rxCreateAs(ctx, e, e.A1, other, e.Name("kv"), map[string]any{})
		if err != nil {
			return err
		}
		if err := refuse("kvBindings naming an EdgeKVNamespace recorded under "+other.DefinitionVersion, e.rxVersionSpec(a, t.Metadata.Name), "/kvBindings/0/resource", "edge.kv"); err != nil {
			return err
		}
	}
	if lerr == nil {
		lw, err := rxCreateAs(ctx, e, e.A1, legacy, e.Name("worker"), map[string]any{})
		if err != nil {
			return err
		}
		spec := e.rxVersionSpec(a)
		spec["worker"] = e.Rel("ModuleWorker", lw.Metadata.Name)
		if err := refuse("/worker naming a ModuleWorker recorded under "+legacy.DefinitionVersion, spec, "/worker", "worker.runtime"); err != nil {
			return err
		}
	}
	kv, err := rxCreateAs(ctx, e, e.A1, kvRef, e.Name("kv"), map[string]any{})
	if err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a, kv.Metadata.Name)); err != nil {
		return fmt.Errorf("targets providing the required interfaces: %w", err)
	}
	return nil
}

func relationPinRecordsFormRef(ctx context.Context, e *Env) error {
	legacy, err := rxOtherVersion(ctx, e, "ModuleWorker")
	if err != nil {
		return err
	}
	if !e.Probe {
		return skipf("losing a pinned target needs the conformance probe external-change")
	}
	wref, _ := e.Ref("ModuleWorker")
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	source, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a))
	if err != nil {
		return err
	}
	if err := rxLoseOutOfBand(ctx, e, a.Worker); err != nil {
		return err
	}
	// The name comes back under the other contract.
	again, err := rxCreateAs(ctx, e, e.A1, legacy, a.Worker.Metadata.Name, map[string]any{})
	if err != nil {
		return fmt.Errorf("re-create the worker under %s: %w", legacy.DefinitionVersion, err)
	}
	_, err = rxDrifted(ctx, e, source, "ExternalChange", "/worker", a.Worker.Metadata.UID, again.Metadata.UID,
		wref.DefinitionVersion, wref.SchemaDigest, legacy.DefinitionVersion, legacy.SchemaDigest)
	if err != nil {
		return fmt.Errorf("a target replaced under another contract (the pin must record both uid and exact FormRef): %w", err)
	}
	return nil
}
