package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "delete-generation-fence", Group: "lifecycle", Summary: "delete needs a key and the current generation fence", Run: deleteGenerationFence},
		Check{ID: "delete-revision-fence", Group: "lifecycle", Summary: "a delete's If-Match with the current revision is honoured; If-Match is never required", Run: deleteRevisionFence},
		Check{ID: "stale-revision-rejected", Group: "lifecycle", Summary: "a stale If-Match is revision_conflict even when only rendering moved the revision", Run: staleRevisionRejected},
		Check{ID: "delete-then-recreate-uid-changes", Group: "lifecycle", Summary: "a re-created name is a new incarnation: new uid, generation and revision 1", Run: deleteThenRecreate},
		Check{ID: "expected-uid-mismatch-rejected", Group: "lifecycle", Summary: "expectedUid naming another incarnation, or carried by a create, is uid_mismatch", Run: expectedUIDMismatch},
	)
}

// lcDeleted checks a raw delete answered 204 with an empty body (or 202)
// and that the resource is gone once any operation settled.
func (e *Env) lcDeleted(ctx context.Context, r *Raw, err error, res *wire.Resource, what string) error {
	if err != nil {
		return err
	}
	switch {
	case r.Status == http.StatusNoContent && len(r.Body) == 0:
	case r.Status == http.StatusAccepted:
		var env wire.OperationEnvelope
		if err := ijson.Unmarshal(r.Body, &env); err != nil {
			return fmt.Errorf("%s: 202 without an operation: %v", what, err)
		}
		if _, err := e.A1.WaitOperation(ctx, env.Operation.ID); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	default:
		return fmt.Errorf("%s answered HTTP %d (%s), want 204 with an empty body", what, r.Status, abbreviate(r.Body))
	}
	return e.lcAbsent(ctx, Addr(res), what)
}

func deleteGenerationFence(ctx context.Context, e *Env) error {
	res, err := lcQueueAtGeneration2(ctx, e)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		what    string
		headers map[string]string
		code    wire.Code
	}{
		{"no fence", map[string]string{wire.HeaderIdempotency: lcKey()}, wire.InvalidArgument},
		{"no fence but a current If-Match", map[string]string{wire.HeaderIdempotency: lcKey(), "If-Match": `"` + res.Metadata.Revision + `"`}, wire.InvalidArgument},
		{"no Idempotency-Key", map[string]string{wire.HeaderGeneration: "2"}, wire.InvalidArgument},
		{"a stale fence", lcUpdateHeaders(lcKey(), "1"), wire.GenerationConflict},
		{"a future fence", lcUpdateHeaders(lcKey(), "3"), wire.GenerationConflict},
	} {
		r, err := e.lcDeleteRaw(ctx, res, c.headers)
		if err := lcExpect(r, err, c.code, "delete with "+c.what); err != nil {
			return err
		}
	}
	if err := e.lcUnchanged(ctx, res, "refused deletes"); err != nil {
		return err
	}
	r, err := e.lcDeleteRaw(ctx, res, lcUpdateHeaders(lcKey(), "2"))
	return e.lcDeleted(ctx, r, err, res, "a delete fenced on the current generation")
}

func deleteRevisionFence(ctx context.Context, e *Env) error {
	res, err := lcQueueAtGeneration2(ctx, e)
	if err != nil {
		return err
	}
	h := lcUpdateHeaders(lcKey(), res.Metadata.Generation)
	h["If-Match"] = `"` + res.Metadata.Revision + `"`
	r, err := e.lcDeleteRaw(ctx, res, h)
	if err := e.lcDeleted(ctx, r, err, res, "a delete with the current If-Match"); err != nil {
		return err
	}
	// A revision moved by rendering alone is what If-Match names.
	w, err := e.lcTornDownWorker(ctx)
	if err != nil {
		return err
	}
	h = lcUpdateHeaders(lcKey(), w.Metadata.Generation)
	h["If-Match"] = `"` + w.Metadata.Revision + `"`
	r, err = e.lcDeleteRaw(ctx, w, h)
	return e.lcDeleted(ctx, r, err, w, "a delete with If-Match naming a revision moved by rendering")
}

// lcTornDownWorker deploys an app, deletes its deployment, version and
// bundle, and reads the worker: generation 1, revision moved by rendering.
func (e *Env) lcTornDownWorker(ctx context.Context) (*wire.Resource, error) {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return nil, err
	}
	for _, res := range []*wire.Resource{a.Deployment, a.Version, a.Bundle} {
		if err := e.Delete(ctx, e.A1, res); err != nil {
			return nil, fmt.Errorf("tear down %s: %w", res.Kind, err)
		}
	}
	w, err := e.A1.Read(ctx, Addr(a.Worker))
	if err != nil {
		return nil, err
	}
	if w.Metadata.Generation != "1" || lcCounter(w.Metadata.Revision) < 2 {
		return nil, fmt.Errorf("the worker is at generation %s revision %s after deploy and teardown; want generation 1 and a moved revision", w.Metadata.Generation, w.Metadata.Revision)
	}
	return w, nil
}

func staleRevisionRejected(ctx context.Context, e *Env) error {
	w, err := e.lcTornDownWorker(ctx)
	if err != nil {
		return err
	}
	rev := lcCounter(w.Metadata.Revision)
	for _, stale := range []int64{1, rev + 1} {
		h := lcUpdateHeaders(lcKey(), "1")
		h["If-Match"] = `"` + strconv.FormatInt(stale, 10) + `"`
		r, err := e.lcDeleteRaw(ctx, w, h)
		if err := lcExpect(r, err, wire.RevisionConflict, fmt.Sprintf("delete with If-Match \"%d\" of a resource at revision %d", stale, rev)); err != nil {
			return err
		}
		if r.Status != http.StatusPreconditionFailed {
			return fmt.Errorf("a stale If-Match answered HTTP %d, want 412", r.Status)
		}
	}
	if err := e.lcUnchanged(ctx, w, "stale If-Match deletes"); err != nil {
		return err
	}
	r, err := e.lcDeleteRaw(ctx, w, lcUpdateHeaders(lcKey(), "1"))
	return e.lcDeleted(ctx, r, err, w, "a delete fenced on generation alone (If-Match is never required)")
}

func deleteThenRecreate(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	old, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	if old, err = e.Update(ctx, e.A1, old, lcQueue(7200)); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, old); err != nil {
		return err
	}
	if err := e.lcAbsent(ctx, Addr(old), "delete"); err != nil {
		return err
	}
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(7200))
	if err != nil {
		return fmt.Errorf("re-create after delete: %w", err)
	}
	m := res.Metadata
	if m.UID == old.Metadata.UID || m.Generation != "1" || m.Revision != "1" {
		return fmt.Errorf("the re-created resource is uid %s generation %s revision %s; want a uid other than %s at 1/1", m.UID, m.Generation, m.Revision, old.Metadata.UID)
	}
	got, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return err
	}
	if got.Metadata.UID != m.UID {
		return fmt.Errorf("read answers uid %s, the re-create minted %s", got.Metadata.UID, m.UID)
	}
	return nil
}

func expectedUIDMismatch(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	update := func(cur *wire.Resource, uid string, retention int) (*wire.Resource, error) {
		b, err := e.lcUpdateBody(ctx, cur, lcQueue(retention))
		if err != nil {
			return nil, err
		}
		b.ExpectedUID = uid
		return e.A1.ApplyAndWait(ctx, b, client.Precondition{Generation: cur.Metadata.Generation, UID: uid})
	}
	_, err = update(res, "u-not-this-incarnation", 7200)
	if err := ExpectCode(err, wire.UIDMismatch); err != nil {
		return fmt.Errorf("update expecting another uid: %w", err)
	}
	if err := e.lcUnchanged(ctx, res, "a uid_mismatch"); err != nil {
		return err
	}
	if res, err = update(res, res.Metadata.UID, 7200); err != nil {
		return fmt.Errorf("update expecting its own uid: %w", err)
	}
	// The realistic case: the name now holds another incarnation.
	old := res
	if err := e.Delete(ctx, e.A1, res); err != nil {
		return err
	}
	if res, err = e.Create(ctx, e.A1, "AtLeastOnceQueue", name, lcQueue(3600)); err != nil {
		return err
	}
	stale := *res
	stale.Metadata.UID = old.Metadata.UID
	_, err = update(&stale, old.Metadata.UID, 9000)
	if err := ExpectCode(err, wire.UIDMismatch); err != nil {
		return fmt.Errorf("update expecting the deleted incarnation: %w", err)
	}
	if err := e.lcUnchanged(ctx, res, "a uid_mismatch"); err != nil {
		return err
	}
	// A create carrying expectedUid.
	body, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	body.ExpectedUID = res.Metadata.UID
	r, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(lcKey()))
	if err := lcExpect(r, err, wire.UIDMismatch, "a create carrying expectedUid"); err != nil {
		return err
	}
	return e.lcAbsent(ctx, client.Address{Space: e.Space, Ref: body.Form.FormRef, Name: body.Metadata.Name}, "a create carrying expectedUid")
}
