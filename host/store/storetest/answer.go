package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// Answered sets r.Answer to bytes standing for the answer a host would
// encode from r, and returns r: distinct for every UID, revision and
// spec, and not JSON, since a store keeps whatever bytes it is given and
// never reads them.
func Answered(r *store.Resource) *store.Resource {
	r.Answer = fmt.Appendf(nil, "answer of %s at revision %d: %s", r.UID, r.Revision, r.Spec)
	return r
}

var answered = Answered

// ExactOf is what the exact read of r's key under its FormRef answers
// after r was written: r's UID and counters and, when the row keeps its
// answer (stored), r.Answer verbatim, else the members of r an answer
// shows (Shown), for the host to encode.
func ExactOf(r *store.Resource, stored bool) *store.Answer {
	a := &store.Answer{UID: r.UID, Generation: r.Generation, Revision: r.Revision}
	if stored {
		a.Body = r.Answer
	} else {
		a.Resource = Shown(r)
	}
	return a
}

// Shown is a copy of the members of r an answer shows — key, FormRef,
// UID, package digest, counters, spec and status — the others zero:
// store.Answer.Resource's members.
func Shown(r *store.Resource) *store.Resource {
	return &store.Resource{Key: r.Key, FormRef: r.FormRef, UID: r.UID, PackageDigest: r.PackageDigest,
		Generation: r.Generation, Revision: r.Revision, Spec: r.Spec, Status: r.Status}
}

// A store's exact-read fast path (store.ExactReader), when it has one,
// answers the bytes the last write of the row gave (store.Resource.Answer)
// with the UID and counters of the resource View and Resource read there
// — after a create, after an update of every member the answer shows,
// after a status-only update, after a delete and a create of a new
// incarnation at the same name — and not-found for another FormRef,
// another tenant, a free name and a deleted resource. A row that keeps no
// answer (an update naming another key, an empty spec and status, a write
// giving none) answers the members of the resource Resource reads there,
// for the host to encode: never bytes a previous write gave.
func testExactAnswer(t *testing.T, s store.Store) {
	er, ok := s.(store.ExactReader)
	if !ok {
		t.Skip("the store has no exact-read fast path; the host reads through View")
	}
	r := answered(kv("acme", "prod", "sessions", "uid-1"))
	create(t, s, r)
	first := wantExactAnswer(t, s, er, r)
	_, err := er.ExactAnswer(t.Context(), r.Key, refV2)
	wantErr(t, "ExactAnswer under another FormRef", err, store.ErrNotFound)
	_, err = er.ExactAnswer(t.Context(), key("other", "prod", "sessions"), refV1)
	wantErr(t, "ExactAnswer in another tenant", err, store.ErrNotFound)
	_, err = er.ExactAnswer(t.Context(), key("acme", "prod", "free"), refV1)
	wantErr(t, "ExactAnswer of a free name", err, store.ErrNotFound)

	next := kv("acme", "prod", "sessions", "uid-1")
	next.PackageDigest = "sha256:6666666666666666666666666666666666666666666666666666666666666666"
	next.Generation, next.Revision = 2, 3
	next.Spec = []byte(`{"title":"sessions v2","tags":["<a&b>"]}`)
	next.Status = []byte(`{"observedGeneration":"2"}`)
	next.UpdatedAt = at(time.Minute)
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(answered(next)) })
	second := wantExactAnswer(t, s, er, next)
	if string(second.Body) == string(first.Body) {
		t.Errorf("ExactAnswer after an update answers the body of before: %s", second.Body)
	}
	// Status and revision alone (a re-render).
	next.Status, next.Revision = []byte(`{"observedGeneration":"2","phase":"Ready"}`), 4
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(answered(next)) })
	wantExactAnswer(t, s, er, next)

	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-1") })
	_, err = er.ExactAnswer(t.Context(), r.Key, refV1)
	wantErr(t, "ExactAnswer of a deleted resource", err, store.ErrNotFound)
	again := answered(kv("acme", "prod", "sessions", "uid-2"))
	create(t, s, again)
	if a := wantExactAnswer(t, s, er, again); a.UID != "uid-2" {
		t.Errorf("ExactAnswer after delete and create: UID %s, want the new incarnation's uid-2", a.UID)
	}

	// Writes whose values the row does not keep as given: an update naming
	// another key (UpdateResource rewrites everything but the UID, key and
	// CreatedAt) and an empty spec and status (stored as empty bytes, which
	// a store may read back as nil or as empty). The row keeps no answer:
	// the exact read answers the resource as Resource reads it back.
	moved := answered(kv("acme", "staging", "other", "uid-2"))
	moved.Revision, moved.Status = 2, []byte(`{"observedGeneration":"1","phase":"Ready"}`)
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(moved) })
	wantExactColumns(t, s, er, again.Key, again.FormRef, "after an update naming another key")
	empty := answered(kv("acme", "prod", "empty", "uid-3"))
	empty.Spec, empty.Status = nil, nil
	create(t, s, empty)
	wantExactColumns(t, s, er, empty.Key, empty.FormRef, "of a row with an empty spec and status")

	// A write giving no answer stores none, and an update giving none
	// drops the answer an earlier write gave (no stale bytes); the next
	// write giving one is answered again.
	bare := kv("acme", "prod", "bare", "uid-4")
	create(t, s, bare)
	wantExactColumns(t, s, er, bare.Key, bare.FormRef, "of a row created without an answer")
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(answered(bare)) })
	wantExactAnswer(t, s, er, bare)
	bare.Revision, bare.Answer = 2, nil
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(bare) })
	wantExactColumns(t, s, er, bare.Key, bare.FormRef, "after an update without an answer")
	bare.Revision = 3
	update(t, s, func(tx store.Tx) error { return tx.UpdateResource(answered(bare)) })
	wantExactAnswer(t, s, er, bare)
}

// wantExactAnswer checks that the exact read of want's key under its
// FormRef answers want.Answer, verbatim, with the UID and counters of the
// resource View reads there, which is want, and returns it.
func wantExactAnswer(t *testing.T, s store.Store, er store.ExactReader, want *store.Resource) *store.Answer {
	t.Helper()
	viewed := viewResource(t, s, want.Key)
	stored := *want
	stored.Answer = nil // the reads of a Resource leave it nil
	equal(t, "Resource at ExactAnswer's key", viewed, &stored)
	got, err := er.ExactAnswer(t.Context(), want.Key, want.FormRef)
	if err != nil {
		t.Fatalf("ExactAnswer of %s: %v", want.Name, err)
	}
	if got.UID != viewed.UID || got.Generation != viewed.Generation || got.Revision != viewed.Revision ||
		string(got.Body) != string(want.Answer) || got.Resource != nil {
		t.Errorf("ExactAnswer of %s:\n got  uid %s generation %d revision %d body %q resource %+v\n want uid %s generation %d revision %d body %q", want.Name,
			got.UID, got.Generation, got.Revision, got.Body, got.Resource, viewed.UID, viewed.Generation, viewed.Revision, want.Answer)
	}
	return got
}

// wantExactColumns checks that the exact read of k under ref answers no
// stored body but the members of the resource View reads at k that an
// answer shows (key, FormRef, UID, package digest, counters, spec and
// status), each as Resource reads it: nil where it reads nil, so the host
// encodes the same answer from either read.
func wantExactColumns(t *testing.T, s store.Store, er store.ExactReader, k store.Key, ref form.FormRef, when string) {
	t.Helper()
	viewed := viewResource(t, s, k)
	got, err := er.ExactAnswer(t.Context(), k, ref)
	if err != nil {
		t.Fatalf("ExactAnswer %s: %v", when, err)
	}
	if got.Body != nil || got.Resource == nil {
		t.Fatalf("ExactAnswer %s: body %q, resource %+v; want no stored body and the row's members", when, got.Body, got.Resource)
	}
	equal(t, "ExactAnswer "+when, got.Resource, Shown(viewed))
	if (got.Resource.Spec == nil) != (viewed.Spec == nil) || (got.Resource.Status == nil) != (viewed.Status == nil) {
		t.Errorf("ExactAnswer %s: spec %q status %q (nil %v, %v); Resource reads spec %q status %q (nil %v, %v)", when,
			got.Resource.Spec, got.Resource.Status, got.Resource.Spec == nil, got.Resource.Status == nil,
			viewed.Spec, viewed.Status, viewed.Spec == nil, viewed.Status == nil)
	}
	if got.UID != viewed.UID || got.Generation != viewed.Generation || got.Revision != viewed.Revision {
		t.Errorf("ExactAnswer %s: uid %s generation %d revision %d; Resource reads uid %s generation %d revision %d", when,
			got.UID, got.Generation, got.Revision, viewed.UID, viewed.Generation, viewed.Revision)
	}
}

// The exact read through View (store.ExactAnswerByView), which the host
// takes for a store without the fast path, answers no body but the
// members an answer shows of the resource Resource reads, with its UID
// and counters, and not-found under another FormRef
// (naming the one it is held under) and at a free name.
func testExactAnswerByView(t *testing.T, s store.Store) {
	r := answered(kv("acme", "prod", "sessions", "uid-1"))
	create(t, s, r)
	viewed := viewResource(t, s, r.Key)
	got, err := store.ExactAnswerByView(t.Context(), s, r.Key, r.FormRef)
	if err != nil {
		t.Fatalf("ExactAnswerByView: %v", err)
	}
	if got.Body != nil || got.UID != viewed.UID || got.Generation != viewed.Generation || got.Revision != viewed.Revision {
		t.Errorf("ExactAnswerByView: uid %s generation %d revision %d body %q; want uid %s generation %d revision %d and no body",
			got.UID, got.Generation, got.Revision, got.Body, viewed.UID, viewed.Generation, viewed.Revision)
	}
	equal(t, "ExactAnswerByView's resource", got.Resource, Shown(viewed))
	_, err = store.ExactAnswerByView(t.Context(), s, r.Key, refV2)
	wantErr(t, "ExactAnswerByView under another FormRef", err, store.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), refV1.String()) {
		t.Errorf("ExactAnswerByView under another FormRef: %v; want it to name the FormRef %s the resource is held under", err, refV1)
	}
	_, err = store.ExactAnswerByView(t.Context(), s, key("acme", "prod", "free"), refV1)
	wantErr(t, "ExactAnswerByView of a free name", err, store.ErrNotFound)
}

func viewResource(t *testing.T, s store.Store, k store.Key) *store.Resource {
	t.Helper()
	var r *store.Resource
	view(t, s, func(tx store.Tx) error {
		var err error
		r, err = tx.Resource(k)
		return err
	})
	return r
}
