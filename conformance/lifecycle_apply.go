package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "apply-create-uid-minted", Group: "lifecycle", Summary: "a create answers 201 with a fresh host uid at generation 1, revision 1", Run: applyCreateUIDMinted},
		Check{ID: "apply-headers-required", Group: "lifecycle", Summary: "apply needs an Idempotency-Key and exactly one of If-None-Match: * or a generation fence", Run: applyHeadersRequired},
		Check{ID: "apply-idempotency-replay", Group: "lifecycle", Summary: "a key replays its recorded status, ETag and body byte-identically; other bytes under it are refused", Run: applyIdempotencyReplay},
		Check{ID: "replay-record-retires-with-its-incarnation", Group: "lifecycle", Summary: "a create's replay record retires when its incarnation is deleted", Run: replayRetires},
		Check{ID: "create-conflict-when-exists", Group: "lifecycle", Summary: "a create of a taken name is generation_conflict and changes nothing", Run: createConflictWhenExists},
	)
}

// lcCreateRaw prepares a create of kind/name as A1 and returns its apply body.
func (e *Env) lcCreateBody(ctx context.Context, kind, name string, spec any) (wire.ApplyRequest, error) {
	req, err := e.Request(kind, name, spec)
	if err != nil {
		return wire.ApplyRequest{}, err
	}
	return lcPrepared(ctx, e.A1, req, "")
}

func applyCreateUIDMinted(ctx context.Context, e *Env) error {
	uids := map[string]bool{}
	for i := 0; i < 2; i++ {
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
		m := res.Metadata
		if !lcUIDGrammar.MatchString(m.UID) || uids[m.UID] {
			return fmt.Errorf("create minted uid %q: not a UID or not fresh", m.UID)
		}
		uids[m.UID] = true
		if m.Generation != "1" || m.Revision != "1" || res.Status.ObservedGeneration != "1" {
			return fmt.Errorf("create answered generation %s revision %s observedGeneration %s, want 1/1/1", m.Generation, m.Revision, res.Status.ObservedGeneration)
		}
		if m.Name != body.Metadata.Name || m.Space != e.Space || res.Form.FormRef != body.Form.FormRef || res.APIVersion != body.APIVersion || res.Kind != body.Kind {
			return fmt.Errorf("create echoed another identity: %+v %s", m, res.Form.FormRef)
		}
		got, err := e.A1.Read(ctx, Addr(res))
		if err != nil {
			return err
		}
		if got.Metadata.UID != m.UID {
			return fmt.Errorf("read answers uid %s, the create minted %s", got.Metadata.UID, m.UID)
		}
	}
	return nil
}

func applyHeadersRequired(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	body, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	addr := client.Address{Space: e.Space, Ref: body.Form.FormRef, Name: name}
	for _, c := range []struct {
		what    string
		headers map[string]string
	}{
		{"no Idempotency-Key", map[string]string{"If-None-Match": "*"}},
		{"neither If-None-Match nor a generation fence", map[string]string{wire.HeaderIdempotency: lcKey()}},
		{"If-None-Match: \"1\"", map[string]string{wire.HeaderIdempotency: lcKey(), "If-None-Match": `"1"`}},
		{"If-None-Match: abc", map[string]string{wire.HeaderIdempotency: lcKey(), "If-None-Match": "abc"}},
		{"If-None-Match: * with a generation fence", map[string]string{wire.HeaderIdempotency: lcKey(), "If-None-Match": "*", wire.HeaderGeneration: "1"}},
	} {
		r, err := e.lcPutApply(ctx, e.Creds.A1, body, c.headers)
		if err := lcExpect(r, err, wire.InvalidArgument, "a create with "+c.what); err != nil {
			return err
		}
	}
	fenced := body
	fenced.ExpectedGeneration = "1"
	r, err := e.lcPutApply(ctx, e.Creds.A1, fenced, lcCreateHeaders(lcKey()))
	if err := lcExpect(r, err, wire.InvalidArgument, "a create with If-None-Match: * and a body expectedGeneration"); err != nil {
		return err
	}
	if err := e.lcAbsent(ctx, addr, "refused creates"); err != nil {
		return err
	}
	r, err = e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(lcKey()))
	if err != nil {
		return err
	}
	res, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("the well-formed create: %w", err)
	}
	upd, err := lcPrepared(ctx, e.A1, e.RequestIn(e.Space, res.Form.FormRef, name, lcQueue(7200)), "1")
	if err != nil {
		return err
	}
	disagree := upd
	disagree.ExpectedGeneration = "2"
	for _, c := range []struct {
		what    string
		body    wire.ApplyRequest
		headers map[string]string
	}{
		{"no fence", upd, map[string]string{wire.HeaderIdempotency: lcKey()}},
		{"no Idempotency-Key", upd, map[string]string{wire.HeaderGeneration: "1"}},
		{"header and body fences that disagree", disagree, lcUpdateHeaders(lcKey(), "1")},
	} {
		r, err := e.lcPutApply(ctx, e.Creds.A1, c.body, c.headers)
		if err := lcExpect(r, err, wire.InvalidArgument, "an update with "+c.what); err != nil {
			return err
		}
	}
	return e.lcUnchanged(ctx, res, "refused updates")
}

// lcSame requires two raw answers to be byte-identical in status, ETag and body.
func lcSame(a, b *Raw, what string) error {
	if a.Status != b.Status || a.Header.Get("ETag") != b.Header.Get("ETag") || !bytes.Equal(a.Body, b.Body) {
		return fmt.Errorf("%s: replay answered HTTP %d ETag %q %s; the recorded answer was HTTP %d ETag %q %s", what,
			b.Status, b.Header.Get("ETag"), abbreviate(b.Body), a.Status, a.Header.Get("ETag"), abbreviate(a.Body))
	}
	return nil
}

func applyIdempotencyReplay(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	body, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	key := lcKey()
	first, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key))
	if err != nil {
		return err
	}
	res, err := e.lcSettle(ctx, e.Creds.A1, first, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	again, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key))
	if err != nil {
		return err
	}
	if err := lcSame(first, again, "an identical create"); err != nil {
		return err
	}
	// The record replays even after the resource moved on.
	if res, err = e.Update(ctx, e.A1, res, lcQueue(7200)); err != nil {
		return err
	}
	if again, err = e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key)); err != nil {
		return err
	}
	if err := lcSame(first, again, "an identical create after an update"); err != nil {
		return err
	}
	// Other bytes under the key are refused.
	other := body
	other.Spec = []byte(`{"deliveryDelaySeconds":0,"messageRetentionSeconds":4000}`)
	r, err := e.lcPutApply(ctx, e.Creds.A1, other, lcCreateHeaders(key))
	if err := lcExpect(r, err, wire.InvalidArgument, "another body under a used key"); err != nil {
		return err
	}
	r, err = e.lcPutApply(ctx, e.Creds.A1, body, lcUpdateHeaders(key, "1"))
	if err := lcExpect(r, err, wire.InvalidArgument, "other preconditions under a used key"); err != nil {
		return err
	}
	// A recorded refusal replays too: the name taken under key2 stays a
	// refusal after the holder is deleted.
	key2 := lcKey()
	refused, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key2))
	if err := lcExpect(refused, err, wire.GenerationConflict, "a create of a taken name"); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, res); err != nil {
		return err
	}
	if again, err = e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key2)); err != nil {
		return err
	}
	if err := lcSame(refused, again, "a recorded refusal replayed after its cause went away (an Idempotency-Key replays its recorded answer, a refusal included; it is never re-executed, spec/host-api-v1alpha3.md §3.5)"); err != nil {
		return err
	}
	return e.lcAbsent(ctx, Addr(res), "replaying a refusal")
}

func replayRetires(ctx context.Context, e *Env) error {
	body, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	key := lcKey()
	r, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key))
	if err != nil {
		return err
	}
	old, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if err := e.Delete(ctx, e.A1, old); err != nil {
		return err
	}
	if r, err = e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(key)); err != nil {
		return err
	}
	res, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("the same create after the incarnation was deleted: %w", err)
	}
	if res.Metadata.UID == old.Metadata.UID {
		return fmt.Errorf("the same create after delete replayed the retired incarnation %s", old.Metadata.UID)
	}
	got, err := e.A1.Read(ctx, Addr(res))
	if err != nil {
		return fmt.Errorf("read the new incarnation: %w", err)
	}
	if got.Metadata.UID != res.Metadata.UID {
		return fmt.Errorf("the re-executed create answered uid %s, the host holds %s", res.Metadata.UID, got.Metadata.UID)
	}
	// Retirement is by uid, not by name: the record of a deleted
	// incarnation executes as new even while the name is held again.
	key2 := lcKey()
	second, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", e.Name("queue"), lcQueue(3600))
	if err != nil {
		return err
	}
	if r, err = e.lcPutApply(ctx, e.Creds.A1, second, lcCreateHeaders(key2)); err != nil {
		return err
	}
	first, err := e.lcSettle(ctx, e.Creds.A1, r, http.StatusCreated)
	if err != nil {
		return err
	}
	// A delete's answer is bound to nothing and keeps replaying.
	delKey := lcKey()
	del := func() (*Raw, error) { return e.lcDeleteRaw(ctx, first, lcUpdateHeaders(delKey, "1")) }
	deleted, err := del()
	if err := e.lcDeleted(ctx, deleted, err, first, "delete"); err != nil {
		return err
	}
	holder, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", second.Metadata.Name, lcQueue(3600))
	if err != nil {
		return err
	}
	r, err = e.lcPutApply(ctx, e.Creds.A1, second, lcCreateHeaders(key2))
	if err := lcExpect(r, err, wire.GenerationConflict, "a retired create record replayed while the name is held by another incarnation"); err != nil {
		return err
	}
	again, err := del()
	if err != nil {
		return err
	}
	if err := lcSame(deleted, again, "a delete replayed after the name was re-created"); err != nil {
		return err
	}
	return e.lcUnchanged(ctx, holder, "replaying the delete of an earlier incarnation")
}

func createConflictWhenExists(ctx context.Context, e *Env) error {
	name := e.Name("queue")
	// Reviews of a create are minted while the name is free; once it is
	// taken, prepare itself needs a fence.
	var bodies []wire.ApplyRequest
	for _, spec := range []map[string]any{lcQueue(3600), lcQueue(7200)} {
		b, err := e.lcCreateBody(ctx, "AtLeastOnceQueue", name, spec)
		if err != nil {
			return err
		}
		bodies = append(bodies, b)
	}
	res, err := e.Create(ctx, e.A2, "AtLeastOnceQueue", name, lcQueue(3600))
	if err != nil {
		return err
	}
	zero := bodies[1]
	zero.Review.PrepareDigest = fmZeroDigest
	for _, body := range append(bodies, zero) {
		r, err := e.lcPutApply(ctx, e.Creds.A1, body, lcCreateHeaders(lcKey()))
		if err := lcExpect(r, err, wire.GenerationConflict, "a create of a taken name"); err != nil {
			return err
		}
		if r.Status != http.StatusPreconditionFailed {
			return fmt.Errorf("a create of a taken name answered HTTP %d, want 412", r.Status)
		}
	}
	return e.lcUnchanged(ctx, res, "conflicting creates")
}
