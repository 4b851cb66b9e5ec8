package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "resource-address-is-tenant-scoped", Group: "tenancy", Summary: "two tenants each create the same space, kind and name and get two incarnations", Run: addressTenantScoped},
		Check{ID: "resource-read-is-tenant-isolated", Group: "tenancy", Summary: "a foreign tenant's resource reads exactly like a never-created one", Run: readTenantIsolated},
		Check{ID: "resource-observe-is-tenant-isolated", Group: "tenancy", Summary: "observing a foreign tenant's resource is resource_not_found and touches nothing", Run: observeTenantIsolated},
		Check{ID: "resource-update-is-tenant-isolated", Group: "tenancy", Summary: "preparing or applying an update to a foreign tenant's resource is resource_not_found and touches nothing", Run: updateTenantIsolated},
		Check{ID: "resource-import-is-tenant-isolated", Group: "tenancy", Summary: "adopting a name only another tenant holds mints a new incarnation; a fenced import of it is resource_not_found", Run: importTenantIsolated},
		Check{ID: "resource-delete-is-tenant-isolated", Group: "tenancy", Summary: "deleting a foreign tenant's resource is resource_not_found and deletes nothing", Run: deleteTenantIsolated},
	)
}

// rxQueue is an AtLeastOnceQueue spec (a Form with update).
func rxQueue(seconds int) map[string]any { return map[string]any{"messageRetentionSeconds": seconds} }

// rxUnchanged checks res still reads, for its owner c, at the same uid,
// generation and revision.
func rxUnchanged(ctx context.Context, c *client.Client, res *wire.Resource, after string) error {
	got, err := c.Read(ctx, Addr(res))
	if err != nil {
		return fmt.Errorf("the owner reading %s %q after %s: %w", res.Kind, res.Metadata.Name, after, err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation || got.Metadata.Revision != res.Metadata.Revision {
		return fmt.Errorf("%s moved %s %q from %s/%s/%s to %s/%s/%s", after, res.Kind, res.Metadata.Name, res.Metadata.UID, res.Metadata.Generation,
			res.Metadata.Revision, got.Metadata.UID, got.Metadata.Generation, got.Metadata.Revision)
	}
	return nil
}

// rxLikeAbsent checks a refusal of a foreign resource is resource_not_found,
// says nothing of the holder, and matches the refusal of a free name.
func rxLikeAbsent(foreign, free *Raw, holder *wire.Resource) error {
	if err := foreign.ExpectCode(wire.ResourceNotFound); err != nil {
		return fmt.Errorf("a foreign tenant's resource: %w", err)
	}
	if err := free.ExpectCode(wire.ResourceNotFound); err != nil {
		return fmt.Errorf("a never-created name: %w", err)
	}
	if foreign.Status != free.Status {
		return fmt.Errorf("foreign HTTP %d, never-created HTTP %d", foreign.Status, free.Status)
	}
	fb, _ := foreign.Envelope()
	nb, _ := free.Envelope()
	if strings.Contains(string(foreign.Body), holder.Metadata.UID) {
		return fmt.Errorf("the refusal reveals the holder's uid: %s", abbreviate(foreign.Body))
	}
	// Same message once the two names are swapped: nothing else differs.
	if fb.HostCode != nb.HostCode || strings.ReplaceAll(fb.Message, holder.Metadata.Name, "NAME") != strings.ReplaceAll(nb.Message, rxFreeName, "NAME") {
		return fmt.Errorf("the foreign refusal %q (%s) differs from the never-created one %q (%s)", fb.Message, fb.HostCode, nb.Message, nb.HostCode)
	}
	return nil
}

// rxFreeName is a name no check creates: the never-created comparison.
const rxFreeName = "never-created-by-anyone"

func addressTenantScoped(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, rxQueue(3600))
	if err != nil {
		return err
	}
	b, err := e.Create(ctx, e.B, "AtLeastOnceQueue", name, rxQueue(7200))
	if err != nil {
		return fmt.Errorf("another tenant creating the same space, kind and name (If-None-Match: *): %w", err)
	}
	if a.Metadata.UID == b.Metadata.UID {
		return fmt.Errorf("two tenants' resources share uid %s", a.Metadata.UID)
	}
	if b.Metadata.Generation != "1" {
		return fmt.Errorf("the second tenant's create is at generation %s", b.Metadata.Generation)
	}
	for _, c := range []struct {
		c    *client.Client
		want *wire.Resource
	}{{e.A1, a}, {e.A2, a}, {e.B, b}} {
		got, err := c.c.Read(ctx, Addr(c.want))
		if err != nil {
			return err
		}
		if got.Metadata.UID != c.want.Metadata.UID || string(got.Spec) != string(c.want.Spec) {
			return fmt.Errorf("a tenant reads uid %s spec %s, want its own %s %s", got.Metadata.UID, got.Spec, c.want.Metadata.UID, c.want.Spec)
		}
	}
	return nil
}

func readTenantIsolated(ctx context.Context, e *Env) error {
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), rxQueue(3600))
	if err != nil {
		return err
	}
	ref := a.Form.FormRef
	foreign, err := e.Do(ctx, e.Creds.B, http.MethodGet, ResourcePath(ref, a.Metadata.Name, "")+ExactQuery(e.Space, ref), nil, nil)
	if err != nil {
		return err
	}
	free, err := e.Do(ctx, e.Creds.B, http.MethodGet, ResourcePath(ref, rxFreeName, "")+ExactQuery(e.Space, ref), nil, nil)
	if err != nil {
		return err
	}
	if err := rxLikeAbsent(foreign, free, a); err != nil {
		return err
	}
	return rxUnchanged(ctx, e.A1, a, "a foreign read")
}

func observeTenantIsolated(ctx context.Context, e *Env) error {
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), rxQueue(3600))
	if err != nil {
		return err
	}
	ref := a.Form.FormRef
	observe := func(name string) (*Raw, error) {
		return e.Do(ctx, e.Creds.B, http.MethodPost, ResourcePath(ref, name, "/observe")+ExactQuery(e.Space, ref),
			map[string]string{wire.HeaderIdempotency: "observe-" + randomHex(8), wire.HeaderGeneration: a.Metadata.Generation}, nil)
	}
	foreign, err := observe(a.Metadata.Name)
	if err != nil {
		return err
	}
	free, err := observe(rxFreeName)
	if err != nil {
		return err
	}
	if err := rxLikeAbsent(foreign, free, a); err != nil {
		return err
	}
	if err := rxUnchanged(ctx, e.A1, a, "a foreign observe"); err != nil {
		return err
	}
	if _, err := e.A1.Observe(ctx, Addr(a), client.Precondition{Generation: a.Metadata.Generation, UID: a.Metadata.UID}); err != nil {
		return fmt.Errorf("the owner observing after a stranger was refused: %w", err)
	}
	return nil
}

func updateTenantIsolated(ctx context.Context, e *Env) error {
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), rxQueue(3600))
	if err != nil {
		return err
	}
	ref := a.Form.FormRef
	req := e.RequestIn(e.Space, ref, a.Metadata.Name, rxQueue(60))
	// A fenced prepare of a name B does not hold addresses nothing.
	_, err = e.B.Prepare(ctx, req, a.Metadata.Generation)
	if err := ExpectCode(err, wire.ResourceNotFound); err != nil {
		return fmt.Errorf("another tenant preparing an update of the resource: %w", err)
	}
	// Nor does a fenced apply, whatever digest it carries (here the
	// owner's own, for the same change).
	body, err := rxPrepared(ctx, e.A1, req, a.Metadata.Generation)
	if err != nil {
		return err
	}
	for _, withUID := range []bool{false, true} {
		b := body
		if withUID {
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			m["expectedUid"] = a.Metadata.UID
			b, _ = json.Marshal(m)
		}
		r, err := rxPut(ctx, e, e.Creds.B, ref, a.Metadata.Name, a.Metadata.Generation, b, nil)
		if err != nil {
			return err
		}
		if err := r.ExpectCode(wire.ResourceNotFound); err != nil {
			return fmt.Errorf("another tenant applying an update (expectedUid %v): %w", withUID, err)
		}
	}
	if err := rxUnchanged(ctx, e.A1, a, "a foreign update"); err != nil {
		return err
	}
	// The owner's prepared update still applies.
	r, err := rxPut(ctx, e, e.Creds.A1, ref, a.Metadata.Name, a.Metadata.Generation, body, nil)
	if err != nil {
		return err
	}
	res, err := rxResourceAnswer(ctx, e, e.Creds.A1, r, http.StatusOK, Addr(a), "")
	if err != nil {
		return fmt.Errorf("the owner's update after a stranger was refused: %w", err)
	}
	if res.Metadata.Generation != "2" {
		return fmt.Errorf("the owner's update is at generation %s, want 2", res.Metadata.Generation)
	}
	return nil
}

func importTenantIsolated(ctx context.Context, e *Env) error {
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), rxQueue(3600))
	if err != nil {
		return err
	}
	ref := a.Form.FormRef
	// A fenced import of a name only A holds addresses nothing.
	if err := rxImportRefused(ctx, e, e.Creds.B, e.Space, ref, a.Metadata.Name, rxQueue(3600), "native-"+randomHex(8), a.Metadata.Generation, wire.ResourceNotFound, nil); err != nil {
		return fmt.Errorf("another tenant's fenced import: %w", err)
	}
	// A new adoption of it is a new adoption of a free name.
	b, err := rxImportOK(ctx, e, e.Creds.B, e.Space, ref, a.Metadata.Name, rxQueue(7200), "native-"+randomHex(8), "", http.StatusCreated)
	if err != nil {
		return fmt.Errorf("another tenant adopting (If-None-Match: *) a name only A holds: %w", err)
	}
	if b.Metadata.UID == a.Metadata.UID || b.Metadata.Generation != "1" {
		return fmt.Errorf("the adoption answered uid %s generation %s; want a new incarnation at generation 1", b.Metadata.UID, b.Metadata.Generation)
	}
	return rxUnchanged(ctx, e.A1, a, "another tenant's imports")
}

func deleteTenantIsolated(ctx context.Context, e *Env) error {
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), rxQueue(3600))
	if err != nil {
		return err
	}
	ref := a.Form.FormRef
	del := func(name string) (*Raw, error) {
		return e.Do(ctx, e.Creds.B, http.MethodDelete, ResourcePath(ref, name, "")+ExactQuery(e.Space, ref),
			map[string]string{wire.HeaderIdempotency: "delete-" + randomHex(8), wire.HeaderGeneration: a.Metadata.Generation}, nil)
	}
	foreign, err := del(a.Metadata.Name)
	if err != nil {
		return err
	}
	free, err := del(rxFreeName)
	if err != nil {
		return err
	}
	if err := rxLikeAbsent(foreign, free, a); err != nil {
		return err
	}
	if err := rxUnchanged(ctx, e.A1, a, "a foreign delete"); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, a); err != nil {
		return fmt.Errorf("the owner's delete after a stranger was refused: %w", err)
	}
	return nil
}

func init() {
	register(
		Check{ID: "relation-resolution-is-tenant-scoped", Group: "tenancy", Summary: "a relation naming what only another tenant holds is absent; the pin is the caller tenant's incarnation", Run: relationResolutionTenantScoped},
		Check{ID: "prepare-is-tenant-scoped", Group: "tenancy", Summary: "a prepareDigest is spent by any principal of its tenant and by no other tenant", Run: prepareTenantScoped},
		Check{ID: "idempotency-is-tenant-scoped", Group: "tenancy", Summary: "the same Idempotency-Key from two tenants is two independent requests", Run: idempotencyTenantScoped},
		Check{ID: "each-tenant-mutates-its-own-plane", Group: "tenancy", Summary: "each tenant runs the whole lifecycle on its own plane without touching the other's", Run: eachTenantOwnPlane},
	)
}

func relationResolutionTenantScoped(ctx context.Context, e *Env) error {
	vref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	ta, err := rxWorkerBundle(ctx, e, e.A1, "fetch")
	if err != nil {
		return err
	}
	tb, err := rxWorkerBundle(ctx, e, e.B, "fetch")
	if err != nil {
		return err
	}
	// B's version names A's worker: absent for B.
	spec := e.rxVersionSpec(tb)
	spec["worker"] = e.Rel("ModuleWorker", ta.Worker.Metadata.Name)
	name := e.Name("version")
	_, err = e.Create(ctx, e.B, "WorkerVersion", name, spec)
	if err := rxRefusedWith(err, wire.ResourceNotFound, "/worker"); err != nil {
		return fmt.Errorf("a relation naming a worker only another tenant holds: %w", err)
	}
	if err := rxAbsent(ctx, e, e.B, vref, name, "after a relation to a foreign worker"); err != nil {
		return err
	}
	// Once B holds that name itself, the relation pins B's incarnation.
	bw, err := e.Create(ctx, e.B, "ModuleWorker", ta.Worker.Metadata.Name, map[string]any{})
	if err != nil {
		return err
	}
	spec["vars"] = map[string]any{"ATTEMPT": "2"}
	v, err := e.Create(ctx, e.B, "WorkerVersion", name, spec)
	if err != nil {
		return fmt.Errorf("the relation once the caller's tenant holds the target: %w", err)
	}
	if err := rxDeleteRefused(ctx, e, e.B, bw, wire.DependencyInUse); err != nil {
		return fmt.Errorf("B's worker must be the pinned one: %w", err)
	}
	// Nothing of B's pins A's worker of the same name: A deletes it freely,
	// and B's version does not notice.
	if err := rxDelete(ctx, e, e.Creds.A1, ta.Worker); err != nil {
		return fmt.Errorf("A's worker of the same name is pinned by another tenant's relation: %w", err)
	}
	got, err := e.B.Read(ctx, Addr(v))
	if err != nil {
		return err
	}
	if c := rxReady(got); c.Reason == "DependencyMissing" || c.Reason == "ExternalChange" || got.Metadata.Revision != v.Metadata.Revision {
		return fmt.Errorf("deleting A's worker re-rendered B's version (Ready=%s/%s, revision %s to %s)", c.Status, c.Reason, v.Metadata.Revision, got.Metadata.Revision)
	}
	return nil
}

func prepareTenantScoped(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	name := e.Name("queue")
	body, err := rxPrepared(ctx, e.A1, e.RequestIn(e.Space, ref, name, rxQueue(3600)), "")
	if err != nil {
		return err
	}
	r, err := rxPut(ctx, e, e.Creds.B, ref, name, "", body, nil)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.InvalidArgument); err != nil {
		return fmt.Errorf("another tenant spending the prepareDigest: %w", err)
	}
	if err := rxAbsent(ctx, e, e.B, ref, name, "another tenant's refused apply"); err != nil {
		return err
	}
	r, err = rxPut(ctx, e, e.Creds.A2, ref, name, "", body, nil)
	if err != nil {
		return err
	}
	res, err := rxResourceAnswer(ctx, e, e.Creds.A2, r, http.StatusCreated, client.Address{Space: e.Space, Ref: ref, Name: name}, "")
	if err != nil {
		return fmt.Errorf("the second principal of the tenant spending the first's prepareDigest: %w", err)
	}
	// The update binding is the tenant's too.
	up, err := rxPrepared(ctx, e.A1, e.RequestIn(e.Space, ref, name, rxQueue(60)), res.Metadata.Generation)
	if err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.B, "AtLeastOnceQueue", name, rxQueue(3600)); err != nil {
		return err
	}
	r, err = rxPut(ctx, e, e.Creds.B, ref, name, res.Metadata.Generation, up, nil)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.InvalidArgument); err != nil {
		return fmt.Errorf("another tenant spending an update prepareDigest on its own same-named resource: %w", err)
	}
	r, err = rxPut(ctx, e, e.Creds.A2, ref, name, res.Metadata.Generation, up, nil)
	if err != nil {
		return err
	}
	if _, err := rxResourceAnswer(ctx, e, e.Creds.A2, r, http.StatusOK, Addr(res), ""); err != nil {
		return fmt.Errorf("the second principal spending an update prepareDigest: %w", err)
	}
	return nil
}

func idempotencyTenantScoped(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	name, key := e.Name("queue"), "shared-key-"+randomHex(8)
	h := map[string]string{wire.HeaderIdempotency: key}
	addr := client.Address{Space: e.Space, Ref: ref, Name: name}
	var first [2]*Raw
	var res [2]*wire.Resource
	for i, c := range []struct {
		c     *client.Client
		token string
	}{{e.A1, e.Creds.A1}, {e.B, e.Creds.B}} {
		body, err := rxPrepared(ctx, c.c, e.RequestIn(e.Space, ref, name, rxQueue(3600)), "")
		if err != nil {
			return err
		}
		if first[i], err = rxPut(ctx, e, c.token, ref, name, "", body, h); err != nil {
			return err
		}
		if res[i], err = rxResourceAnswer(ctx, e, c.token, first[i], http.StatusCreated, addr, ""); err != nil {
			return fmt.Errorf("tenant %d's create under a key the other tenant used: %w", i+1, err)
		}
		// Its own retry replays its own answer.
		again, err := rxPut(ctx, e, c.token, ref, name, "", body, h)
		if err != nil {
			return err
		}
		if again.Status != first[i].Status || string(again.Body) != string(first[i].Body) {
			return fmt.Errorf("tenant %d's retry answered HTTP %d %s, want its recorded answer", i+1, again.Status, abbreviate(again.Body))
		}
	}
	if res[0].Metadata.UID == res[1].Metadata.UID {
		return fmt.Errorf("both tenants got uid %s", res[0].Metadata.UID)
	}
	// Byte-identical requests (observe: same target, fence and empty
	// body) under one key are still two requests.
	var uids [2]string
	for i, token := range []string{e.Creds.A1, e.Creds.B} {
		r, err := e.Do(ctx, token, http.MethodPost, ResourcePath(ref, name, "/observe")+ExactQuery(e.Space, ref),
			map[string]string{wire.HeaderIdempotency: key + "-observe", wire.HeaderGeneration: "1"}, nil)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("tenant %d's observe answered HTTP %d: %s", i+1, r.Status, abbreviate(r.Body))
		}
		var env wire.ResourceEnvelope
		if err := json.Unmarshal(r.Body, &env); err != nil {
			return err
		}
		uids[i] = env.Resource.Metadata.UID
	}
	if uids[0] != res[0].Metadata.UID || uids[1] != res[1].Metadata.UID {
		return fmt.Errorf("observes under one key answered uids %v, want each tenant's own %s and %s", uids, res[0].Metadata.UID, res[1].Metadata.UID)
	}
	return nil
}

func eachTenantOwnPlane(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	name := e.Name("queue")
	// Both tenants hold the name; every request addresses the caller's own.
	a, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, rxQueue(3600))
	if err != nil {
		return err
	}
	for _, p := range []struct {
		label string
		c     *client.Client
		token string
	}{{"tenant B", e.B, e.Creds.B}, {"tenant A (after B's whole lifecycle)", e.A1, e.Creds.A1}} {
		cur := a
		if p.c == e.B {
			if cur, err = e.Create(ctx, e.B, "AtLeastOnceQueue", name, rxQueue(3600)); err != nil {
				return fmt.Errorf("%s create: %w", p.label, err)
			}
		}
		if _, err := p.c.Read(ctx, Addr(cur)); err != nil {
			return fmt.Errorf("%s read: %w", p.label, err)
		}
		if _, err := p.c.Observe(ctx, Addr(cur), client.Precondition{Generation: cur.Metadata.Generation, UID: cur.Metadata.UID}); err != nil {
			return fmt.Errorf("%s observe: %w", p.label, err)
		}
		up, err := e.Update(ctx, p.c, cur, rxQueue(7200))
		if err != nil {
			return fmt.Errorf("%s update: %w", p.label, err)
		}
		im, err := rxImportOK(ctx, e, p.token, e.Space, ref, name, rxQueue(7200), "native-plane-"+randomHex(8), up.Metadata.Generation, http.StatusOK)
		if err != nil {
			return fmt.Errorf("%s fenced import: %w", p.label, err)
		}
		if im.Metadata.UID != up.Metadata.UID {
			return fmt.Errorf("%s fenced import answered uid %s, want %s", p.label, im.Metadata.UID, up.Metadata.UID)
		}
		if p.c == e.B {
			// B's whole lifecycle left A's resource as it was.
			if err := rxUnchanged(ctx, e.A1, a, "tenant B's lifecycle on the same name"); err != nil {
				return err
			}
		}
		if err := rxDelete(ctx, e, p.token, im); err != nil {
			return fmt.Errorf("%s delete: %w", p.label, err)
		}
		if _, err := p.c.Read(ctx, Addr(cur)); ExpectCode(err, wire.ResourceNotFound) != nil {
			return fmt.Errorf("%s reads its deleted resource: %v", p.label, err)
		}
	}
	return nil
}
