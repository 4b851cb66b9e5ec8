package conformance

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "cross-space-isolation", Group: "lifecycle", Summary: "one name in two spaces is two resources; relations never cross a space", Run: crossSpaceIsolation},
		Check{ID: "cross-principal-idempotency-isolation", Group: "lifecycle", Summary: "one Idempotency-Key from two principals is two independent operations", Run: crossPrincipalIdempotency},
		Check{ID: "concurrent-unrelated-mutation", Group: "lifecycle", Summary: "parallel creates and updates of distinct resources all succeed", Run: concurrentUnrelatedMutation},
		Check{ID: "package-digest-not-identity", Group: "lifecycle", Summary: "form.packageDigest never selects a resource nor binds a review", Run: packageDigestNotIdentity},
	)
}

func crossSpaceIsolation(ctx context.Context, e *Env) error {
	ref, err := e.Ref("AtLeastOnceQueue")
	if err != nil {
		return err
	}
	s1, s2, s3 := e.Space, e.Space+" other", e.Space+" third"
	name := e.Name("queue")
	// One name and one Idempotency-Key in two spaces: two creates.
	key := lcKey()
	var made [2]*wire.Resource
	for i, sp := range []string{s1, s2} {
		b, err := lcPrepared(ctx, e.A1, e.RequestIn(sp, ref, name, lcQueue(3600+i)), "")
		if err != nil {
			return err
		}
		r, err := e.lcPutApply(ctx, e.Creds.A1, b, lcCreateHeaders(key))
		if err != nil {
			return err
		}
		if made[i], err = e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated); err != nil {
			return fmt.Errorf("create in %q under a key used in another space: %w", sp, err)
		}
	}
	r1, r2 := made[0], made[1]
	if r1.Metadata.UID == r2.Metadata.UID {
		return fmt.Errorf("%q in two spaces share uid %s", name, r1.Metadata.UID)
	}
	if err := e.lcAbsent(ctx, client.Address{Space: s3, Ref: ref, Name: name}, "creating it in two other spaces"); err != nil {
		return err
	}
	if r1, err = e.Update(ctx, e.A1, r1, lcQueue(9000)); err != nil {
		return err
	}
	if err := e.lcUnchanged(ctx, r2, "updating the same name in another space"); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, r2); err != nil {
		return err
	}
	if err := e.lcUnchanged(ctx, r1, "deleting the same name in another space"); err != nil {
		return err
	}
	// A relation names a target in its own space only.
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	a := &App{Worker: w}
	if err := e.AddVersion(ctx, e.A1, a, "fetch"); err != nil {
		return err
	}
	vref, err := e.Ref("WorkerVersion")
	if err != nil {
		return err
	}
	spec := map[string]any{"worker": e.Rel("ModuleWorker", w.Metadata.Name), "bundle": e.Rel("WorkerBundle", a.Bundle.Metadata.Name), "handlers": []any{"fetch"}}
	vname := e.Name("version")
	_, err = e.Apply(ctx, e.A1, e.RequestIn(s2, vref, vname, spec), nil)
	if err := ExpectCode(err, wire.ResourceNotFound); err != nil {
		return fmt.Errorf("a version in %q naming a worker and bundle that live only in %q: %w", s2, s1, err)
	}
	if err := e.lcAbsent(ctx, client.Address{Space: s2, Ref: vref, Name: vname}, "a refused cross-space relation"); err != nil {
		return err
	}
	if _, err := e.Apply(ctx, e.A1, e.RequestIn(s1, vref, vname, spec), nil); err != nil {
		return fmt.Errorf("the same version in the targets' own space: %w", err)
	}
	return nil
}

func crossPrincipalIdempotency(ctx context.Context, e *Env) error {
	var bodies [3]wire.ApplyRequest
	for i := range bodies {
		b, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
		if err != nil {
			return err
		}
		bodies[i] = b
	}
	// One key, two principals, two different requests: both execute.
	k := lcKey()
	first, err := e.lcPutApply(ctx, e.Creds.A1, bodies[0], lcCreateHeaders(k))
	if err != nil {
		return err
	}
	if _, err := e.lcSettle(ctx, e.Creds.A1, first, http.StatusCreated); err != nil {
		return fmt.Errorf("A1 create: %w", err)
	}
	r, err := e.lcPutApply(ctx, e.Creds.A2, bodies[1], lcCreateHeaders(k))
	if err != nil {
		return err
	}
	if _, err := e.lcSettle(ctx, e.Creds.A2, r, http.StatusCreated); err != nil {
		return fmt.Errorf("A2's own request under A1's key: %w", err)
	}
	// One key, two principals, the same request: the second executes
	// anew (the name is taken) instead of replaying the first's 201.
	k2 := lcKey()
	if r, err = e.lcPutApply(ctx, e.Creds.A1, bodies[2], lcCreateHeaders(k2)); err != nil {
		return err
	}
	if _, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated); err != nil {
		return fmt.Errorf("A1 create: %w", err)
	}
	r, err = e.lcPutApply(ctx, e.Creds.A2, bodies[2], lcCreateHeaders(k2))
	if err := lcExpect(r, err, wire.GenerationConflict, "A2 sending A1's create under A1's key"); err != nil {
		return err
	}
	again, err := e.lcPutApply(ctx, e.Creds.A1, bodies[0], lcCreateHeaders(k))
	if err != nil {
		return err
	}
	return lcSame(first, again, "A1's replay after A2 used the key")
}

func concurrentUnrelatedMutation(ctx context.Context, e *Env) error {
	if _, err := e.Ref("AtLeastOnceQueue"); err != nil {
		return err
	}
	const n = 15
	errs := make([]error, n)
	out := make([]*wire.Resource, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := []*client.Client{e.A1, e.A2, e.B}[i%3]
			res, err := e.Create(ctx, c, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600+i))
			if err == nil {
				res, err = e.Update(ctx, c, res, lcQueue(7200+i))
			}
			errs[i], out[i] = err, res
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("parallel mutation %d of %d distinct resources: %w", i, n, err)
		}
	}
	uids := map[string]bool{}
	for i, res := range out {
		got, err := []*client.Client{e.A1, e.A2, e.B}[i%3].Read(ctx, Addr(res))
		if err != nil {
			return err
		}
		if got.Metadata.Generation != "2" || got.Metadata.UID != res.Metadata.UID || uids[got.Metadata.UID] {
			return fmt.Errorf("after parallel mutations %q is uid %s generation %s", res.Metadata.Name, got.Metadata.UID, got.Metadata.Generation)
		}
		uids[got.Metadata.UID] = true
	}
	return nil
}

func packageDigestNotIdentity(ctx context.Context, e *Env) error {
	pkg := func() string { return "sha256:" + randomHex(32) }
	name := e.Name("queue")
	req, err := e.Request("AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	req.Form.PackageDigest = pkg()
	res, err := e.Apply(ctx, e.A1, req, nil)
	if err != nil {
		return fmt.Errorf("create carrying a package digest: %w", err)
	}
	// Reviewed under one package digest, applied under another.
	upd := e.RequestIn(e.Space, res.Form.FormRef, name, lcQueue(7200))
	upd.Form.PackageDigest = pkg()
	body, err := lcPrepared(ctx, e.A1, upd, res.Metadata.Generation)
	if err != nil {
		return err
	}
	body.Form.PackageDigest = pkg()
	got, err := e.A1.ApplyAndWait(ctx, body, client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID})
	if err != nil {
		return fmt.Errorf("update carrying another package digest: %w", err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != "2" {
		return fmt.Errorf("the update under another package digest answered uid %s generation %s; want uid %s generation 2", got.Metadata.UID, got.Metadata.Generation, res.Metadata.UID)
	}
	// A fenced import under yet another package digest adopts the same resource.
	imp := wire.ImportRequest{APIVersion: body.APIVersion, Kind: body.Kind, Form: body.Form, Metadata: body.Metadata, Spec: body.Spec, NativeID: "conformance-native-" + randomHex(8)}
	imp.Form.PackageDigest = pkg()
	if got, err = e.A1.ImportAndWait(ctx, imp, client.Precondition{Generation: "2", UID: res.Metadata.UID}); err != nil {
		return fmt.Errorf("fenced import carrying another package digest: %w", err)
	}
	if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != "2" {
		return fmt.Errorf("the import answered uid %s generation %s", got.Metadata.UID, got.Metadata.Generation)
	}
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, ResourcePath(res.Form.FormRef, name, ExactQuery(e.Space, res.Form.FormRef))+"&packageDigest="+queryEscape(imp.Form.PackageDigest), nil, nil)
	if err := lcExpect(r, err, wire.InvalidArgument, "a read whose query carries packageDigest"); err != nil {
		return err
	}
	return e.Delete(ctx, e.A1, got)
}
