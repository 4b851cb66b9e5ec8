package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "update-generation-fence", Group: "lifecycle", Summary: "an update is fenced by the header or the body's expectedGeneration, which must agree", Run: updateGenerationFence},
		Check{ID: "stale-generation-rejected", Group: "lifecycle", Summary: "a stale or future generation fence is generation_conflict on prepare and apply", Run: staleGenerationRejected},
		Check{ID: "revision-etag-exact", Group: "lifecycle", Summary: "ETag is exactly the quoted revision on read and synchronous apply", Run: revisionETagExact},
		Check{ID: "observe-fence-exact", Group: "lifecycle", Summary: "observe needs a key and the current generation and never moves it", Run: observeFenceExact},
		Check{ID: "status-change-bumps-revision-not-generation", Group: "lifecycle", Summary: "a rendered status change moves the revision only", Run: statusChangeBumpsRevision},
		Check{ID: "spec-change-bumps-generation", Group: "lifecycle", Summary: "a spec change moves generation and revision by one; an identical re-apply moves nothing", Run: specChangeBumpsGeneration},
	)
}

// lcDeleteRaw sends a raw DELETE of res with exactly headers.
func (e *Env) lcDeleteRaw(ctx context.Context, res *wire.Resource, headers map[string]string) (*Raw, error) {
	ref := res.Form.FormRef
	return e.Do(ctx, e.Creds.A1, http.MethodDelete, ResourcePath(ref, res.Metadata.Name, ExactQuery(res.Metadata.Space, ref)), headers, nil)
}

// lcObserveRaw sends a raw observe of res with exactly headers.
func (e *Env) lcObserveRaw(ctx context.Context, res *wire.Resource, headers map[string]string) (*Raw, error) {
	ref := res.Form.FormRef
	return e.Do(ctx, e.Creds.A1, http.MethodPost, ResourcePath(ref, res.Metadata.Name, "/observe")+ExactQuery(res.Metadata.Space, ref), headers, nil)
}

// lcUpdateBody prepares an update of res to spec, fenced on its generation.
func (e *Env) lcUpdateBody(ctx context.Context, res *wire.Resource, spec any) (wire.ApplyRequest, error) {
	return lcPrepared(ctx, e.A1, e.RequestIn(res.Metadata.Space, res.Form.FormRef, res.Metadata.Name, spec), res.Metadata.Generation)
}

// lcCounter reads a generation or revision.
func lcCounter(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func updateGenerationFence(ctx context.Context, e *Env) error {
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	for i, c := range []struct {
		how          string
		header, body bool
	}{{"the header", true, false}, {"the body's expectedGeneration", false, true}, {"both, agreeing", true, true}} {
		b, err := e.lcUpdateBody(ctx, res, lcQueue(4000+i))
		if err != nil {
			return err
		}
		h := map[string]string{wire.HeaderIdempotency: lcKey()}
		if c.header {
			h[wire.HeaderGeneration] = res.Metadata.Generation
		}
		if c.body {
			b.ExpectedGeneration = res.Metadata.Generation
		}
		r, err := e.lcPutApply(ctx, e.Creds.A1, b, h)
		if err != nil {
			return err
		}
		got, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusOK)
		if err != nil {
			return fmt.Errorf("an update fenced by %s: %w", c.how, err)
		}
		if want := strconv.FormatInt(lcCounter(res.Metadata.Generation)+1, 10); got.Metadata.Generation != want || got.Metadata.UID != res.Metadata.UID {
			return fmt.Errorf("an update fenced by %s answered uid %s generation %s, want %s", c.how, got.Metadata.UID, got.Metadata.Generation, want)
		}
		res = got
	}
	b, err := e.lcUpdateBody(ctx, res, lcQueue(5000))
	if err != nil {
		return err
	}
	r, err := e.lcPutApply(ctx, e.Creds.A1, b, map[string]string{wire.HeaderIdempotency: lcKey()})
	if err := lcExpect(r, err, wire.InvalidArgument, "an update without a fence (an update apply needs Takoform-Expected-Generation)"); err != nil {
		return err
	}
	// A fence is a canonical positive decimal; int64 max is a real (future) one.
	for _, g := range []string{"0", "0" + res.Metadata.Generation, "+" + res.Metadata.Generation, "-1", "1.0", "9223372036854775808"} {
		r, err := e.lcPutApply(ctx, e.Creds.A1, b, lcUpdateHeaders(lcKey(), g))
		if err := lcExpect(r, err, wire.InvalidArgument, fmt.Sprintf("an update fenced on %q (a generation fence is a canonical positive decimal in 1..9223372036854775807; any other text is invalid_argument, spec/host-api-v1alpha3.md §3.2)", g)); err != nil {
			return err
		}
	}
	r, err = e.lcPutApply(ctx, e.Creds.A1, b, lcUpdateHeaders(lcKey(), "9223372036854775807"))
	if err := lcExpect(r, err, wire.GenerationConflict, "an update fenced on generation 9223372036854775807 (a well-formed fence that is not the current generation is generation_conflict, never accepted)"); err != nil {
		return err
	}
	return e.lcUnchanged(ctx, res, "unfenced and malformed updates")
}

func staleGenerationRejected(ctx context.Context, e *Env) error {
	res, err := lcQueueAtGeneration2(ctx, e)
	if err != nil {
		return err
	}
	req := e.RequestIn(e.Space, res.Form.FormRef, res.Metadata.Name, lcQueue(9000))
	for _, g := range []string{"1", "3"} {
		_, err := e.A1.Prepare(ctx, req, g)
		if err := ExpectCode(err, wire.GenerationConflict); err != nil {
			return fmt.Errorf("prepare fenced on generation %s of a resource at 2: %w", g, err)
		}
	}
	b, err := e.lcUpdateBody(ctx, res, lcQueue(9000))
	if err != nil {
		return err
	}
	for _, g := range []string{"1", "3"} {
		r, err := e.lcPutApply(ctx, e.Creds.A1, b, lcUpdateHeaders(lcKey(), g))
		if err := lcExpect(r, err, wire.GenerationConflict, "apply fenced on generation "+g+" of a resource at 2"); err != nil {
			return err
		}
		if r.Status != http.StatusPreconditionFailed {
			return fmt.Errorf("a stale generation answered HTTP %d, want 412", r.Status)
		}
	}
	stale := b
	stale.ExpectedGeneration = "1"
	r, err := e.lcPutApply(ctx, e.Creds.A1, stale, map[string]string{wire.HeaderIdempotency: lcKey()})
	if err := lcExpect(r, err, wire.GenerationConflict, "apply whose body expects generation 1 of a resource at 2"); err != nil {
		return err
	}
	return e.lcUnchanged(ctx, res, "stale fences")
}

func revisionETagExact(ctx context.Context, e *Env) error {
	body, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	r, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(lcKey()))
	if err != nil {
		return err
	}
	res, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if r.Status != http.StatusAccepted && r.Header.Get("ETag") != `"1"` {
		return fmt.Errorf("create ETag %q, want \"1\"", r.Header.Get("ETag"))
	}
	b, err := e.lcUpdateBody(ctx, res, lcQueue(7200))
	if err != nil {
		return err
	}
	if r, err = e.lcPutApply(ctx, e.Creds.A1, b, lcUpdateHeaders(lcKey(), "1")); err != nil {
		return err
	}
	if res, err = e.lcSettle(ctx, e.Creds.A1, r, http.StatusOK); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if r.Status != http.StatusAccepted && r.Header.Get("ETag") != `"2"` {
		return fmt.Errorf("update ETag %q, want \"2\"", r.Header.Get("ETag"))
	}
	// A revision moved by rendering alone shows in the read's ETag.
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	for _, x := range []*wire.Resource{res, a.Worker, a.Version, a.Deployment} {
		if r, err = e.lcRead(ctx, e.Creds.A1, Addr(x)); err != nil {
			return err
		}
		got, err := r.lcResource(http.StatusOK)
		if err != nil {
			return fmt.Errorf("read %s %q: %w", x.Kind, x.Metadata.Name, err)
		}
		if x == a.Worker && lcCounter(got.Metadata.Revision) <= lcCounter(x.Metadata.Revision) {
			return fmt.Errorf("the worker's revision did not move when it was deployed (%s)", got.Metadata.Revision)
		}
	}
	return nil
}

func observeFenceExact(ctx context.Context, e *Env) error {
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
		{"no Idempotency-Key", map[string]string{wire.HeaderGeneration: "2"}, wire.InvalidArgument},
		{"a stale fence", lcUpdateHeaders(lcKey(), "1"), wire.GenerationConflict},
		{"a future fence", lcUpdateHeaders(lcKey(), "3"), wire.GenerationConflict},
	} {
		r, err := e.lcObserveRaw(ctx, res, c.headers)
		if err := lcExpect(r, err, c.code, "observe with "+c.what); err != nil {
			return err
		}
	}
	if err := e.lcUnchanged(ctx, res, "refused observes"); err != nil {
		return err
	}
	r, err := e.lcObserveRaw(ctx, res, lcUpdateHeaders(lcKey(), "2"))
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return fmt.Errorf("a fenced observe answered HTTP %d: %s", r.Status, abbreviate(r.Body))
	}
	var env wire.ResourceEnvelope
	if err := ijson.Unmarshal(r.Body, &env); err != nil {
		return fmt.Errorf("observe answer is not a closed {\"resource\": …}: %v", err)
	}
	m := env.Resource.Metadata
	if m.Generation != "2" || m.UID != res.Metadata.UID || !bytes.Equal(env.Resource.Spec, res.Spec) {
		return fmt.Errorf("observe fenced on 2 answered uid %s generation %s spec %s", m.UID, m.Generation, env.Resource.Spec)
	}
	if et := r.Header.Get("ETag"); et != "" && et != `"`+m.Revision+`"` {
		return fmt.Errorf("observe ETag %q is not the quoted revision %s", et, m.Revision)
	}
	got, err := e.A1.Observe(ctx, Addr(res), client.Precondition{Generation: "2", UID: res.Metadata.UID})
	if err != nil {
		return fmt.Errorf("client observe: %w", err)
	}
	if got.Metadata.Generation != "2" {
		return fmt.Errorf("observe moved the generation to %s", got.Metadata.Generation)
	}
	return nil
}

func statusChangeBumpsRevision(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	before := a.Worker
	served, err := e.A1.Read(ctx, Addr(before))
	if err != nil {
		return err
	}
	if err := lcRevisionOnly(before, served, "deploying it"); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, a.Deployment); err != nil {
		return err
	}
	idle, err := e.A1.Read(ctx, Addr(before))
	if err != nil {
		return err
	}
	if err := lcRevisionOnly(served, idle, "deleting its deployment"); err != nil {
		return err
	}
	if !e.Probe {
		return nil
	}
	// The probe's touch-status makes exactly one host-side status change:
	// revision + 1 with a matching strong ETag, generation and outputs
	// unchanged (spec/conformance-probe.md §1).
	b, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": e.Rel("ModuleWorker", b.Worker.Metadata.Name)})
	if err != nil {
		return fmt.Errorf("create an endpoint: %w", err)
	}
	r, err := e.Do(ctx, e.Creds.A1, http.MethodPost, ResourcePath(ep.Form.FormRef, ep.Metadata.Name, "/observe")+ExactQuery(ep.Metadata.Space, ep.Form.FormRef),
		map[string]string{wire.HeaderIdempotency: lcKey(), wire.HeaderGeneration: ep.Metadata.Generation, wire.HeaderProbe: "touch-status"}, nil)
	if err != nil {
		return err
	}
	var touched wire.ResourceEnvelope
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &touched) != nil {
		return fmt.Errorf("observe with the probe touch-status answered HTTP %d: %s", r.Status, abbreviate(r.Body))
	}
	got := touched.Resource
	want := fmt.Sprint(lcCounter(ep.Metadata.Revision) + 1)
	if got.Metadata.Revision != want || r.Header.Get("ETag") != `"`+want+`"` || got.Metadata.Generation != ep.Metadata.Generation || got.Metadata.UID != ep.Metadata.UID {
		return fmt.Errorf("touch-status left the endpoint at revision %s (ETag %s) generation %s; want revision %s with ETag \"%s\" at generation %s",
			got.Metadata.Revision, r.Header.Get("ETag"), got.Metadata.Generation, want, want, ep.Metadata.Generation)
	}
	if !bytes.Equal(got.Status.Outputs, ep.Status.Outputs) {
		return fmt.Errorf("touch-status changed the endpoint's outputs %s -> %s; an endpoint's address is stable for its uid", ep.Status.Outputs, got.Status.Outputs)
	}
	return nil
}

// lcRevisionOnly requires after to be before with a higher revision, the
// same generation, spec and observedGeneration, and another Ready condition.
func lcRevisionOnly(before, after *wire.Resource, what string) error {
	if after.Metadata.UID != before.Metadata.UID || after.Metadata.Generation != before.Metadata.Generation || after.Status.ObservedGeneration != before.Metadata.Generation {
		return fmt.Errorf("after %s the worker is uid %s generation %s (observed %s); want uid %s generation %s", what,
			after.Metadata.UID, after.Metadata.Generation, after.Status.ObservedGeneration, before.Metadata.UID, before.Metadata.Generation)
	}
	if lcCounter(after.Metadata.Revision) <= lcCounter(before.Metadata.Revision) {
		return fmt.Errorf("after %s the worker's revision is %s, was %s; its status changed", what, after.Metadata.Revision, before.Metadata.Revision)
	}
	if !bytes.Equal(after.Spec, before.Spec) {
		return fmt.Errorf("after %s the worker's spec changed to %s", what, after.Spec)
	}
	if fmReady(before) == fmReady(after) {
		return fmt.Errorf("after %s the worker's Ready condition is still %s", what, fmReady(after))
	}
	return nil
}

// fmReady renders a resource's Ready condition as status/reason.
func fmReady(res *wire.Resource) string {
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status + "/" + c.Reason
		}
	}
	return "absent"
}

func specChangeBumpsGeneration(ctx context.Context, e *Env) error {
	res, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	want := func(got *wire.Resource, gen, rev, what string) error {
		m := got.Metadata
		if m.UID != res.Metadata.UID || m.Generation != gen || m.Revision != rev || got.Status.ObservedGeneration != gen {
			return fmt.Errorf("after %s: uid %s generation %s revision %s observedGeneration %s; want generation %s revision %s",
				what, m.UID, m.Generation, m.Revision, got.Status.ObservedGeneration, gen, rev)
		}
		return nil
	}
	if err := want(res, "1", "1", "create"); err != nil {
		return err
	}
	steps := []struct {
		spec     map[string]any
		gen, rev string
		what     string
	}{
		{lcQueue(7200), "2", "2", "a messageRetentionSeconds change"},
		{lcQueue(7200), "2", "2", "an identical re-apply"},
		{map[string]any{"messageRetentionSeconds": 7200, "deliveryDelaySeconds": 0}, "2", "2", "a re-apply writing the default"},
		{map[string]any{"messageRetentionSeconds": 7200, "deliveryDelaySeconds": 5}, "3", "3", "a deliveryDelaySeconds change"},
	}
	cur := res
	for _, s := range steps {
		got, err := e.Update(ctx, e.A1, cur, s.spec)
		if err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		if err := want(got, s.gen, s.rev, s.what); err != nil {
			return err
		}
		if got, err = e.A1.Read(ctx, Addr(res)); err != nil {
			return err
		}
		if err := want(got, s.gen, s.rev, s.what+" (read back)"); err != nil {
			return err
		}
		cur = got
	}
	return nil
}
