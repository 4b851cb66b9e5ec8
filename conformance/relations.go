package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "binding-target-missing-404-before-mutation", Group: "relations", Summary: "a binding naming an absent target is resource_not_found naming the pointer, and nothing is stored", Run: bindingTargetMissing},
		Check{ID: "dependency-in-use-on-bound-target-delete", Group: "relations", Summary: "deleting a bound binding target is dependency_in_use and leaves it untouched", Run: dependencyInUseOnBoundTarget},
		Check{ID: "relation-target-missing-rejected", Group: "relations", Summary: "a plain relation naming an absent target is resource_not_found naming the pointer, and nothing is stored", Run: relationTargetMissing},
		Check{ID: "relation-target-deletion-blocked", Group: "relations", Summary: "every pinned relation target refuses deletion until its holder is gone", Run: relationTargetDeletionBlocked},
	)
}

// rxKVRefs returns the Edge family's EdgeKVNamespace (the installed
// definition without update) and, when installed, another definition
// version of it (zero FormRef otherwise).
func rxKVRefs(ctx context.Context, e *Env) (family, other form.FormRef, err error) {
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return family, other, err
	}
	n := 0
	for _, p := range profiles.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != e.Group || p.FormRef.Kind != "EdgeKVNamespace" {
			continue
		}
		if slices.Contains(p.Operations, "update") {
			other = *p.FormRef
			continue
		}
		family = *p.FormRef
		n++
	}
	if n != 1 {
		return family, other, skipf("the host serves %d EdgeKVNamespace definitions without update; want exactly the family's one", n)
	}
	return family, other, nil
}

// rxOtherVersion returns an installed Edge definition of kind other than
// the one e.Ref answers, or a skip when there is none.
func rxOtherVersion(ctx context.Context, e *Env, kind string) (form.FormRef, error) {
	ref, err := e.Ref(kind)
	if err != nil {
		return ref, err
	}
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return ref, err
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.APIVersion == e.Group && p.FormRef.Kind == kind && *p.FormRef != ref {
			return *p.FormRef, nil
		}
	}
	return ref, skipf("the host installs no second definition version of %s", kind)
}

// rxCreateAs creates name under an exact ref as c in the run's space.
func rxCreateAs(ctx context.Context, e *Env, c *client.Client, ref form.FormRef, name string, spec any) (*wire.Resource, error) {
	return e.Apply(ctx, c, e.RequestIn(e.Space, ref, name, spec), nil)
}

// rxAbsent checks that name is absent under ref for c.
func rxAbsent(ctx context.Context, e *Env, c *client.Client, ref form.FormRef, name, why string) error {
	_, err := c.Read(ctx, client.Address{Space: e.Space, Ref: ref, Name: name})
	if err == nil {
		return fmt.Errorf("%s: %s %q was stored anyway", why, ref.Kind, name)
	}
	if err := ExpectCode(err, wire.ResourceNotFound); err != nil {
		return fmt.Errorf("%s: reading %s %q: %w", why, ref.Kind, name, err)
	}
	return nil
}

// rxWorkerBundle creates a ModuleWorker and a WorkerBundle exporting
// handlers (no version, no deployment).
func rxWorkerBundle(ctx context.Context, e *Env, c *client.Client, handlers ...string) (*App, error) {
	a := &App{}
	var err error
	if a.Worker, err = e.Create(ctx, c, "ModuleWorker", e.Name("worker"), map[string]any{}); err != nil {
		return nil, fmt.Errorf("create worker: %w", err)
	}
	digest, err := e.UploadBundle(ctx, c, Module(handlers...))
	if err != nil {
		return nil, fmt.Errorf("upload bundle: %w", err)
	}
	if a.Bundle, err = e.Create(ctx, c, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest}); err != nil {
		return nil, fmt.Errorf("create bundle: %w", err)
	}
	return a, nil
}

// rxVersionSpec is a WorkerVersion spec of a's worker and bundle serving
// fetch, with kvBindings naming the given namespaces as CACHE0, CACHE1, ….
func (e *Env) rxVersionSpec(a *App, kv ...string) map[string]any {
	spec := map[string]any{"worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name), "bundle": e.Rel("WorkerBundle", a.Bundle.Metadata.Name), "handlers": []any{"fetch"}}
	if len(kv) > 0 {
		bs := make([]any, len(kv))
		for i, n := range kv {
			bs[i] = map[string]any{"name": fmt.Sprintf("CACHE%d", i), "resource": e.Rel("EdgeKVNamespace", n)}
		}
		spec["kvBindings"] = bs
	}
	return spec
}

// rxReady returns the Ready condition of res.
func rxReady(res *wire.Resource) wire.Condition {
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			return c
		}
	}
	return wire.Condition{}
}

// rxRefusedWith checks err is the refusal code and its message names want.
func rxRefusedWith(err error, code wire.Code, want ...string) error {
	if err := ExpectCode(err, code); err != nil {
		return err
	}
	var we *wire.Error
	errors.As(err, &we)
	for _, w := range want {
		if !strings.Contains(we.Message, w) {
			return fmt.Errorf("the %s refusal must name %q: %q", code, w, we.Message)
		}
	}
	return nil
}

// rxDelete deletes res as token under a fresh Idempotency-Key (a retry
// under the client's derived key would replay an earlier refusal) and
// waits out an operation.
func rxDelete(ctx context.Context, e *Env, token string, res *wire.Resource) error {
	ref := res.Form.FormRef
	r, err := e.Do(ctx, token, http.MethodDelete, ResourcePath(ref, res.Metadata.Name, "")+ExactQuery(res.Metadata.Space, ref),
		map[string]string{wire.HeaderIdempotency: "del-" + randomHex(8), wire.HeaderGeneration: res.Metadata.Generation}, nil)
	if err != nil {
		return err
	}
	switch r.Status {
	case http.StatusNoContent:
		return nil
	case http.StatusAccepted:
		op, _, err := rxPoll(ctx, e, token, r)
		if err != nil {
			return err
		}
		if op.Error != nil {
			return fmt.Errorf("the delete operation failed: %s: %s", op.Error.Code, op.Error.Message)
		}
		return nil
	}
	if body, err := r.Envelope(); err == nil {
		return fmt.Errorf("%s: %s", body.Code, body.Message)
	}
	return fmt.Errorf("delete answered HTTP %d: %s", r.Status, abbreviate(r.Body))
}

// rxDeleteRefused deletes res as c expecting code, then checks res is
// still there, unchanged in uid and generation.
func rxDeleteRefused(ctx context.Context, e *Env, c *client.Client, res *wire.Resource, code wire.Code) error {
	err := e.Delete(ctx, c, res)
	if err := ExpectCode(err, code); err != nil {
		return fmt.Errorf("delete %s %q: %w", res.Kind, res.Metadata.Name, err)
	}
	got, err := c.Read(ctx, Addr(res))
	if err != nil {
		return fmt.Errorf("%s %q after a refused delete: %w", res.Kind, res.Metadata.Name, err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation {
		return fmt.Errorf("a refused delete moved %s %q from uid %s generation %s to %s/%s", res.Kind, res.Metadata.Name,
			res.Metadata.UID, res.Metadata.Generation, got.Metadata.UID, got.Metadata.Generation)
	}
	return nil
}

func bindingTargetMissing(ctx context.Context, e *Env) error {
	kv, _, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	absent, name := e.Name("kv"), e.Name("version")
	_, err = e.Create(ctx, e.A1, "WorkerVersion", name, e.rxVersionSpec(a, absent))
	if err := rxRefusedWith(err, wire.ResourceNotFound, "/kvBindings/0/resource"); err != nil {
		return fmt.Errorf("a kvBindings entry naming an absent EdgeKVNamespace: %w", err)
	}
	ref, _ := e.Ref("WorkerVersion")
	if err := rxAbsent(ctx, e, e.A1, ref, name, "after a binding to an absent target"); err != nil {
		return err
	}
	// Nothing was stored or claimed: once the target exists the same
	// version is created under the same name.
	if _, err := rxCreateAs(ctx, e, e.A1, kv, absent, map[string]any{}); err != nil {
		return fmt.Errorf("create the namespace: %w", err)
	}
	// (Another body: the refused create's replay record keeps its answer.)
	spec := e.rxVersionSpec(a, absent)
	spec["vars"] = map[string]any{"ATTEMPT": "2"}
	if _, err := e.Create(ctx, e.A1, "WorkerVersion", name, spec); err != nil {
		return fmt.Errorf("the version, once its binding target exists: %w", err)
	}
	return nil
}

func dependencyInUseOnBoundTarget(ctx context.Context, e *Env) error {
	kvRef, _, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	kv, err := rxCreateAs(ctx, e, e.A1, kvRef, e.Name("kv"), map[string]any{})
	if err != nil {
		return err
	}
	version, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a, kv.Metadata.Name))
	if err != nil {
		return fmt.Errorf("bind the namespace: %w", err)
	}
	if err := rxDeleteRefused(ctx, e, e.A1, kv, wire.DependencyInUse); err != nil {
		return err
	}
	// The other principal of the tenant is refused the same way.
	if err := rxDeleteRefused(ctx, e, e.A2, kv, wire.DependencyInUse); err != nil {
		return fmt.Errorf("as the second principal: %w", err)
	}
	if err := e.Delete(ctx, e.A1, version); err != nil {
		return fmt.Errorf("delete the binding holder: %w", err)
	}
	if err := rxDelete(ctx, e, e.Creds.A1, kv); err != nil {
		return fmt.Errorf("delete the released namespace: %w", err)
	}
	return nil
}

func relationTargetMissing(ctx context.Context, e *Env) error {
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	ref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	for _, c := range []struct{ pointer, field, kind string }{
		{"/worker", "worker", "ModuleWorker"},
		{"/bundle", "bundle", "WorkerBundle"},
	} {
		spec := e.rxVersionSpec(a)
		spec[c.field] = e.Rel(c.kind, e.Name("absent"))
		name := e.Name("version")
		_, err := e.Create(ctx, e.A1, "WorkerVersion", name, spec)
		if err := rxRefusedWith(err, wire.ResourceNotFound, c.pointer); err != nil {
			return fmt.Errorf("a WorkerVersion whose %s names an absent %s: %w", c.pointer, c.kind, err)
		}
		if err := rxAbsent(ctx, e, e.A1, ref, name, "after a relation to an absent "+c.kind); err != nil {
			return err
		}
	}
	// A deployment's /worker is checked the same way.
	v, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a))
	if err != nil {
		return err
	}
	name := e.Name("deploy")
	_, err = e.Create(ctx, e.A1, "WorkerDeployment", name, map[string]any{
		"worker":   e.Rel("ModuleWorker", e.Name("absent")),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", v.Metadata.Name)}},
	})
	if err := rxRefusedWith(err, wire.ResourceNotFound, "/worker"); err != nil {
		return fmt.Errorf("a WorkerDeployment whose /worker names an absent ModuleWorker: %w", err)
	}
	dref, _ := e.Ref("WorkerDeployment")
	return rxAbsent(ctx, e, e.A1, dref, name, "after a deployment of an absent worker")
}

func relationTargetDeletionBlocked(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	// The version is pinned by the deployment, the bundle by the version,
	// the worker by both.
	for _, res := range []*wire.Resource{a.Version, a.Bundle, a.Worker} {
		if err := rxDeleteRefused(ctx, e, e.A1, res, wire.DependencyInUse); err != nil {
			return err
		}
	}
	// Tearing down in order releases each in turn.
	for _, res := range []*wire.Resource{a.Deployment, a.Version, a.Bundle, a.Worker} {
		cur, err := e.A1.Read(ctx, Addr(res))
		if err != nil {
			return err
		}
		if err := rxDelete(ctx, e, e.Creds.A1, cur); err != nil {
			return fmt.Errorf("delete %s once nothing pins it: %w", res.Kind, err)
		}
		if _, err := e.A1.Read(ctx, Addr(res)); ExpectCode(err, wire.ResourceNotFound) != nil {
			return fmt.Errorf("%s %q is still readable after its delete answered", res.Kind, res.Metadata.Name)
		}
	}
	return nil
}

func init() {
	register(
		Check{ID: "relation-incarnation-change-detected", Group: "relations", Summary: "a target lost out of band and re-created is reported DependencyMissing, then ExternalChange, never re-bound", Run: relationIncarnationChange},
		Check{ID: "relation-reapply-repins", Group: "relations", Summary: "a spec-identical re-apply re-pins a drifted relation: revision moves, generation does not", Run: relationReapplyRepins},
	)
}

// rxLoseOutOfBand deletes res with the conformance probe external-change:
// the backend lost it, so no dependency protection applies.
func rxLoseOutOfBand(ctx context.Context, e *Env, res *wire.Resource) error {
	if !e.Probe {
		return skipf("losing a pinned target needs the conformance probe external-change")
	}
	ref := res.Form.FormRef
	r, err := e.Do(ctx, e.Creds.A1, http.MethodDelete, ResourcePath(ref, res.Metadata.Name, "")+ExactQuery(res.Metadata.Space, ref),
		map[string]string{wire.HeaderIdempotency: "lose-" + randomHex(8), wire.HeaderGeneration: res.Metadata.Generation, wire.HeaderProbe: "external-change"}, nil)
	if err != nil {
		return err
	}
	if r.Status != http.StatusNoContent {
		return fmt.Errorf("out-of-band delete (probe external-change) of %s %q answered HTTP %d, want 204: %s", res.Kind, res.Metadata.Name, r.Status, abbreviate(r.Body))
	}
	return nil
}

// rxDrifted reads res and checks it reports reason on Ready=False with a
// host reason naming every string in want, at an unchanged generation.
func rxDrifted(ctx context.Context, e *Env, res *wire.Resource, reason string, want ...string) (*wire.Resource, error) {
	got, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return nil, fmt.Errorf("read the source %s %q: %w", res.Kind, res.Metadata.Name, err)
	}
	c := rxReady(got)
	if c.Status != "False" || c.Reason != reason {
		return nil, fmt.Errorf("source %s %q reports Ready=%s/%s, want False/%s", res.Kind, res.Metadata.Name, c.Status, c.Reason, reason)
	}
	if n := utf8.RuneCountInString(c.HostReason); n > 256 {
		return nil, fmt.Errorf("source %s %q: the %s hostReason is %d characters; the wire schema holds hostReason to at most 256 (spec/conformance-probe.md §4)", res.Kind, res.Metadata.Name, reason, n)
	}
	for _, w := range want {
		if !strings.Contains(c.HostReason, w) {
			return nil, fmt.Errorf("the %s hostReason %q does not name %q", reason, c.HostReason, w)
		}
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation {
		return nil, fmt.Errorf("drift moved the source from uid %s generation %s to %s/%s; it is not a desired-state change",
			res.Metadata.UID, res.Metadata.Generation, got.Metadata.UID, got.Metadata.Generation)
	}
	return got, nil
}

func relationIncarnationChange(ctx context.Context, e *Env) error {
	kvRef, _, err := rxKVRefs(ctx, e)
	if err != nil {
		return err
	}
	if !e.Probe {
		return skipf("losing a pinned target needs the conformance probe external-change")
	}
	a, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	kv, err := rxCreateAs(ctx, e, e.A1, kvRef, e.Name("kv"), map[string]any{})
	if err != nil {
		return err
	}
	source, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), e.rxVersionSpec(a, kv.Metadata.Name))
	if err != nil {
		return err
	}
	if c := rxReady(source); c.Status != "True" {
		return fmt.Errorf("a freshly bound version reports Ready=%s/%s", c.Status, c.Reason)
	}
	if err := rxLoseOutOfBand(ctx, e, kv); err != nil {
		return err
	}
	const ptr = "/kvBindings/0/resource"
	missing, err := rxDrifted(ctx, e, source, "DependencyMissing", ptr)
	if err != nil {
		return fmt.Errorf("after its target vanished: %w", err)
	}
	if missing.Metadata.Revision == source.Metadata.Revision {
		return errors.New("the rendering changed (Ready) but the source's revision did not move")
	}
	again, err := rxCreateAs(ctx, e, e.A1, kvRef, kv.Metadata.Name, map[string]any{})
	if err != nil {
		return fmt.Errorf("re-create the target: %w", err)
	}
	if again.Metadata.UID == kv.Metadata.UID {
		return errors.New("the re-created target reused the lost incarnation's uid")
	}
	changed, err := rxDrifted(ctx, e, source, "ExternalChange", ptr, kv.Metadata.UID, again.Metadata.UID)
	if err != nil {
		return fmt.Errorf("after its target came back as a new incarnation: %w", err)
	}
	if changed.Metadata.Revision == missing.Metadata.Revision {
		return errors.New("the rendering changed (DependencyMissing to ExternalChange) but the source's revision did not move")
	}
	// Reading never heals it, and the new incarnation is not pinned: it
	// deletes freely.
	if _, err := rxDrifted(ctx, e, source, "ExternalChange", ptr); err != nil {
		return fmt.Errorf("a second read: %w", err)
	}
	if err := e.Delete(ctx, e.A1, again); err != nil {
		return fmt.Errorf("the new incarnation is pinned by nothing, yet its delete failed: %w", err)
	}
	return nil
}

func relationReapplyRepins(ctx context.Context, e *Env) error {
	if !e.Probe {
		return skipf("losing a pinned target needs the conformance probe external-change")
	}
	a, err := e.DeployApp(ctx, e.A1, "fetch", "queue")
	if err != nil {
		return err
	}
	queue, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), map[string]any{"messageRetentionSeconds": 86400})
	if err != nil {
		return err
	}
	spec := map[string]any{
		"queue": e.Rel("AtLeastOnceQueue", queue.Metadata.Name), "worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name),
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 5, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 0,
	}
	consumer, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), spec)
	if err != nil {
		return fmt.Errorf("create the consumer: %w", err)
	}
	if err := rxLoseOutOfBand(ctx, e, queue); err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", queue.Metadata.Name, map[string]any{"messageRetentionSeconds": 86400}); err != nil {
		return fmt.Errorf("re-create the queue: %w", err)
	}
	drifted, err := rxDrifted(ctx, e, consumer, "ExternalChange", "/queue")
	if err != nil {
		return err
	}
	repinned, err := e.Update(ctx, e.A1, drifted, spec)
	if err != nil {
		return fmt.Errorf("a spec-identical re-apply of a drifted source: %w", err)
	}
	if repinned.Metadata.UID != consumer.Metadata.UID || repinned.Metadata.Generation != consumer.Metadata.Generation {
		return fmt.Errorf("re-pinning moved uid/generation %s/%s to %s/%s; it is not a desired-state change",
			consumer.Metadata.UID, consumer.Metadata.Generation, repinned.Metadata.UID, repinned.Metadata.Generation)
	}
	if repinned.Metadata.Revision == drifted.Metadata.Revision {
		return fmt.Errorf("re-pinning changed the Ready condition but left revision %s", repinned.Metadata.Revision)
	}
	if c := rxReady(repinned); c.Reason == "ExternalChange" || c.Reason == "DependencyMissing" {
		return fmt.Errorf("after the re-apply the consumer still reports Ready=%s/%s", c.Status, c.Reason)
	}
	// The new pin protects the new incarnation.
	cur, err := e.A1.Read(ctx, Addr(queue))
	if err != nil {
		return err
	}
	if err := rxDeleteRefused(ctx, e, e.A1, cur, wire.DependencyInUse); err != nil {
		return fmt.Errorf("the re-pinned queue: %w", err)
	}
	// Once re-pinned, the same apply moves nothing.
	again, err := e.Update(ctx, e.A1, repinned, spec)
	if err != nil {
		return err
	}
	if again.Metadata.Generation != repinned.Metadata.Generation || again.Metadata.Revision != repinned.Metadata.Revision {
		return fmt.Errorf("an idempotent re-apply moved generation/revision %s/%s to %s/%s", repinned.Metadata.Generation,
			repinned.Metadata.Revision, again.Metadata.Generation, again.Metadata.Revision)
	}
	return nil
}
