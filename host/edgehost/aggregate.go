package edgehost

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// CheckCommit applies the cross-resource Edge rules to res as it would be
// stored (spec/host-api-v1alpha3.md §6.5, §7.3, §3.6), on apply, import
// and at 202 commit; on the v1beta1 group also the artifact-backed
// revisions' manifest kinds, WorkerVersion.assets and the migration
// ledger's prefix rule (spec/lane-v1beta1.md §3.6, §6.4, §6.7).
func (f *Family) CheckCommit(tx store.Tx, def *form.Definition, res *store.Resource, creating bool) error {
	spec, err := specOf(res)
	if err != nil {
		return err
	}
	if kindOf(def) != "" {
		if err := checkAggregate(def, spec); err != nil {
			return err
		}
	}
	switch kindOf(def) {
	case WorkerBundle, StaticAssetBundle, SQLiteMigrationSet:
		if want := manifestKind(def); want != "" {
			_, err := f.resolveManifest(tx, res.Tenant, ijson.As[string](spec["manifestDigest"]), res.APIVersion, want)
			return err
		}
	case WorkerVersion:
		if err := f.checkVersion(tx, res, spec); err != nil {
			return err
		}
		if v1beta1Kind(def) != "" {
			return f.checkAssets(tx, res, spec)
		}
	case SQLiteMigrationApplication:
		if v1beta1Kind(def) != "" {
			_, err := f.migrationPlan(tx, res, spec)
			return err
		}
	case WorkerDeployment:
		return checkDeployment(tx, res, spec)
	case WorkerCustomDomain:
		if err := gate(tx, res, spec, WorkerCustomDomain); err != nil {
			return err
		}
		return checkHostnameClaim(tx, res, spec)
	case WorkerEndpoint:
		if err := single(tx, res, spec, "worker", ModuleWorker, WorkerEndpoint, "worker-endpoint-single"); err != nil {
			return err
		}
		return gate(tx, res, spec, WorkerEndpoint)
	case WorkerCronTrigger:
		return gate(tx, res, spec, WorkerCronTrigger)
	case QueueConsumer:
		if err := single(tx, res, spec, "queue", "AtLeastOnceQueue", QueueConsumer, "queue-single-consumer"); err != nil {
			return err
		}
		if err := checkDeadLetterCycle(tx, res, spec); err != nil {
			return err
		}
		return gate(tx, res, spec, QueueConsumer)
	}
	return nil
}

// checkVersion: every declared handler is exported by the bundle's main
// module, and every service binding targets a worker serving fetch.
func (f *Family) checkVersion(tx store.Tx, res *store.Resource, spec map[string]any) error {
	bundle, err := lookup(tx, key(res, WorkerBundle, relName(spec, "bundle")))
	if err != nil || bundle == nil {
		return err // relation resolution already refused an absent bundle
	}
	digest, err := specString(bundle, "manifestDigest")
	if err != nil {
		return err
	}
	lb, err := f.loadBundle(tx, res.Tenant, digest, res.APIVersion)
	if err != nil {
		return err
	}
	exported, err := f.exportedHandlers(lb)
	if err != nil {
		return err
	}
	for _, h := range asList(spec["handlers"]) {
		if s := ijson.As[string](h); !contains(exported, s) {
			return errorf(wire.InvalidArgument, "handler_not_exported", "handler %q is declared but main module %s does not export it on its default export (it exports %s); export it or remove it from handlers", s, lb.MainModule, listOr(exported))
		}
	}
	for i, b := range asList(spec["serviceBindings"]) {
		name := relName(ijson.As[map[string]any](b), "resource")
		w, err := lookup(tx, key(res, ModuleWorker, name))
		if err != nil || w == nil {
			return err
		}
		served, d, err := servedHandlers(tx, w)
		if err != nil {
			return err
		}
		gone := false
		if d != nil {
			if gone, err = beingDeleted(tx, d); err != nil {
				return err
			}
		}
		if gone || !contains(served, edge.HandlerFetch) {
			return errorf(wire.UnsupportedCapability, "service_target_not_serving", "serviceBindings/%d: ModuleWorker %q does not serve fetch (no active deployment whose every version exports fetch)", i, name)
		}
	}
	return nil
}

// loadBundle resolves a WorkerBundle manifest the tenant holds for a
// version of group (resolveManifest) and reads its modules' bytes.
func (f *Family) loadBundle(tx store.Tx, tenant, digest, group string) (artifact.LoadBundle, error) {
	m, err := f.resolveManifest(tx, tenant, digest, group, artifact.KindWorkerBundle)
	if err != nil {
		return artifact.LoadBundle{}, err
	}
	lb := artifact.LoadBundle{Digest: digest, MainModule: m.MainModule}
	for _, mod := range m.Modules {
		b, err := tx.Blob(mod.Digest)
		if err != nil {
			return artifact.LoadBundle{}, fmt.Errorf("read module %s: %w", mod.Name, err)
		}
		lb.Modules = append(lb.Modules, artifact.LoadModule{Name: mod.Name, MediaType: mod.MediaType, Data: b})
	}
	return lb, nil
}

// Preloads: only WorkerVersion mutations, with an engine load check.
func (f *Family) Preloads(def *form.Definition) bool {
	return f.LoadCheck != nil && kindOf(def) == WorkerVersion
}

// Preload runs the engine load check (LoadCheck) of a WorkerVersion's
// bundle before the mutation's write transaction (host.Preloader), so the
// verdict CheckCommit asks for is ready and the store's writer is not held
// while the engine loads (repo decision 0052). Whatever fails here,
// CheckCommit finds again and answers.
func (f *Family) Preload(ctx context.Context, tx store.Tx, def *form.Definition, k store.Key, spec map[string]any) {
	if !f.Preloads(def) {
		return
	}
	bundle, err := lookup(tx, store.Key{Tenant: k.Tenant, Space: k.Space, APIVersion: k.APIVersion, Kind: WorkerBundle, Name: relName(spec, "bundle")})
	if err != nil || bundle == nil {
		return
	}
	digest, err := specString(bundle, "manifestDigest")
	if err != nil {
		return
	}
	lb, err := f.loadBundle(tx, k.Tenant, digest, k.APIVersion)
	if err != nil {
		return
	}
	if _, err := f.LoadCheck(ctx, lb); err != nil {
		return // a refusal is CheckCommit's to answer
	}
}

// exportedHandlers is the exported handler set of a bundle's main module
// (spec/runtime-v1.md §1.2), or the invalid_argument refusal of steps 3a–3c
// of spec/runtime-v1.md §1.3 with the load code as hostCode. The engine
// decides when there is one (LoadCheck); without one, or when it could not
// decide, the static check does: every JavaScript module parses
// (artifact.ModuleSyntax) and the main module's default export is read by
// artifact.ExportedHandlers.
func (f *Family) exportedHandlers(b artifact.LoadBundle) ([]string, error) {
	if f.LoadCheck != nil {
		handlers, err := f.LoadCheck(context.Background(), b)
		var le *artifact.LoadError
		switch {
		case err == nil:
			return handlers, nil
		case errors.As(err, &le):
			return nil, errorf(wire.InvalidArgument, le.Code, "bundle %s did not load: %s", b.Digest, le.Message)
		}
		// The engine did not decide (LoadCheck logs why): the static check does.
	}
	var src []byte
	for _, mod := range b.Modules {
		if err := artifact.ModuleSyntax(mod.Name, mod.MediaType, mod.Data); err != nil {
			return nil, errorf(wire.InvalidArgument, artifact.LoadModuleSyntaxError, "bundle %s: %v", b.Digest, err)
		}
		if mod.Name == b.MainModule {
			src = mod.Data
		}
	}
	exported, err := artifact.ExportedHandlers(src)
	if err != nil {
		return nil, errorf(wire.InvalidArgument, artifact.LoadHandlerNotExported, "main module %s: %v; the default export must be an object with the declared handlers", b.MainModule, err)
	}
	return exported, nil
}

// activeDeployment returns a worker's deployment, nil when it has none.
func activeDeployment(tx store.Tx, worker *store.Resource) (*store.Resource, error) {
	ds, err := holders(tx, worker, WorkerDeployment)
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	return ds[0], nil
}

// beingDeleted reports whether an accepted delete targets r: it counts as
// being removed (spec/host-api-v1alpha3.md §4), so it serves no new attachment or binding.
func beingDeleted(tx store.Tx, r *store.Resource) (bool, error) {
	op, err := tx.PendingOperationFor(r.Key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && op.Action == store.ActionDelete, err
}

// servedHandlers is the set of handlers every weighted version of the
// worker's active deployment exports (nil without a deployment).
func servedHandlers(tx store.Tx, worker *store.Resource) ([]string, *store.Resource, error) {
	d, err := activeDeployment(tx, worker)
	if err != nil || d == nil {
		return nil, nil, err
	}
	spec, err := specOf(d)
	if err != nil {
		return nil, nil, err
	}
	served, err := versionsHandlers(tx, d, spec)
	return served, d, err
}

// versionsHandlers intersects the handlers of a deployment spec's versions.
func versionsHandlers(tx store.Tx, d *store.Resource, spec map[string]any) ([]string, error) {
	var served []string
	for i, v := range asList(spec["versions"]) {
		ver, err := lookup(tx, key(d, WorkerVersion, relName(ijson.As[map[string]any](v), "workerVersion")))
		if err != nil {
			return nil, err
		}
		var hs []string
		if ver != nil {
			vs, err := specOf(ver)
			if err != nil {
				return nil, err
			}
			for _, h := range asList(vs["handlers"]) {
				hs = append(hs, ijson.As[string](h))
			}
		}
		if i == 0 {
			served = hs
			continue
		}
		var both []string
		for _, h := range served {
			if contains(hs, h) {
				both = append(both, h)
			}
		}
		served = both
	}
	return served, nil
}

// gate: an attachment needs its handler exported by every weighted version
// of its worker's active deployment (spec/host-api-v1alpha3.md §6.5).
func gate(tx store.Tx, res *store.Resource, spec map[string]any, kind string) error {
	need, _ := edge.AttachmentHandler(kind)
	w, err := lookup(tx, key(res, ModuleWorker, relName(spec, "worker")))
	if err != nil || w == nil {
		return err
	}
	served, d, err := servedHandlers(tx, w)
	if err != nil {
		return err
	}
	if d == nil {
		return errorf(wire.UnsupportedCapability, "no_active_deployment", "%s needs ModuleWorker %q to have an active WorkerDeployment serving %s; deploy a version first", kind, w.Name, need)
	}
	if gone, err := beingDeleted(tx, d); err != nil || gone {
		if err != nil {
			return err
		}
		return errorf(wire.UnsupportedCapability, "deployment_deleting", "%s needs ModuleWorker %q to have an active WorkerDeployment serving %s, but WorkerDeployment %q is being deleted", kind, w.Name, need, d.Name)
	}
	if !contains(served, need) {
		return errorf(wire.UnsupportedCapability, "handler_not_served", "%s needs handler %s, but not every version of WorkerDeployment %q exports it (served: %s)", kind, need, d.Name, listOr(served))
	}
	return nil
}

// single: at most one resource of kind per target (one endpoint per
// worker, one consumer per queue).
func single(tx store.Tx, res *store.Resource, spec map[string]any, field, targetKind, kind, hostCode string) error {
	t, err := lookup(tx, key(res, targetKind, relName(spec, field)))
	if err != nil || t == nil {
		return err
	}
	others, err := holders(tx, t, kind)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.UID == res.UID {
			continue
		}
		if kind == QueueConsumer {
			queue, err := relTarget(o, "queue")
			if err != nil {
				return err
			}
			if queue != t.Name {
				continue // it names this queue only as its dead-letter queue
			}
		}
		return errorf(wire.InvalidArgument, hostCode, "%s %q already holds %s %q; only one %s per %s", kind, o.Name, targetKind, t.Name, kind, targetKind)
	}
	return nil
}

// checkDeadLetterCycle walks the dead-letter chain from res's own
// dead-letter queue; reaching the queue res drains is a cycle.
func checkDeadLetterCycle(tx store.Tx, res *store.Resource, spec map[string]any) error {
	drained := relName(spec, "queue")
	next := relName(spec, "deadLetterQueue")
	seen := map[string]bool{}
	path := []string{drained}
	for next != "" && !seen[next] {
		path = append(path, next)
		if next == drained {
			return errorf(wire.InvalidArgument, "dead_letter_cycle", "deadLetterQueue leads back to queue %q: %s; break the cycle", drained, strings.Join(path, " -> "))
		}
		seen[next] = true
		q, err := lookup(tx, key(res, "AtLeastOnceQueue", next))
		if err != nil || q == nil {
			return err
		}
		consumers, err := holders(tx, q, QueueConsumer)
		if err != nil {
			return err
		}
		next = ""
		for _, c := range consumers {
			if c.UID == res.UID {
				continue
			}
			cs, err := specOf(c)
			if err != nil {
				return err
			}
			if relName(cs, "queue") == q.Name {
				next = relName(cs, "deadLetterQueue")
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func listOr(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	s := append([]string(nil), l...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}
