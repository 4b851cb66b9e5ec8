package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// engineOn is an Engine over the built-in catalog on a fresh SQLite file,
// with the Edge family's rules, and the Form ref of EdgeKVNamespace.
func engineOn(t *testing.T) (*lifecycle.Engine, store.Store, form.FormRef) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	var ref form.FormRef
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.Kind == "EdgeKVNamespace" && r.APIVersion == wire.V1alpha3.EdgeGroup {
			ref = r
		}
	}
	if ref.Kind == "" {
		t.Fatal("the built-in catalog has no EdgeKVNamespace")
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	e := lifecycle.New(lifecycle.Config{Catalog: cat, Family: host.DefaultFamily(cat), Secret: []byte("test secret"), Now: func() time.Time { return now }})
	return e, st, ref
}

func applyOf(e *lifecycle.Engine, ref form.FormRef, name string, create bool, uid string, gen int64) *lifecycle.Mutation {
	spec, _ := ijson.Canonical([]byte(`{}`))
	k := store.Key{Tenant: "t", Space: "s", APIVersion: ref.APIVersion, Kind: ref.Kind, Name: name}
	m := &lifecycle.Mutation{Action: store.ActionApply, Principal: "p", Key: k, Ref: ref, Spec: spec, SpecDigest: ijson.SumDigest(spec), Create: create, Generation: gen}
	m.PrepareDigest = e.PrepareDigest("", k, ref, m.SpecDigest, uid, gen)
	return m
}

func commit(t *testing.T, st store.Store, e *lifecycle.Engine, m *lifecycle.Mutation) (*lifecycle.Outcome, error) {
	t.Helper()
	var o *lifecycle.Outcome
	err := st.Update(context.Background(), func(tx store.Tx) error {
		var err error
		o, err = e.Commit(tx, m, nil, time.Now())
		return err
	})
	return o, err
}

// TestCommitOutcome: a create's outcome is the created incarnation with
// the answer bytes the store keeps for the exact read; an unchanged
// re-apply is not created and writes nothing; a refusal is a *wire.Error
// that writes nothing; a delete reports no resource and no UID.
func TestCommitOutcome(t *testing.T) {
	e, st, ref := engineOn(t)
	ctx := context.Background()
	o, err := commit(t, st, e, applyOf(e, ref, "cache", true, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if o.Action != store.ActionApply || !o.Created || o.UID == "" || o.Resource == nil || o.Resource.UID != o.UID || o.Operation != nil {
		t.Fatalf("create outcome %+v", o)
	}
	if o.Resource.Generation != 1 || o.Resource.Revision != 1 || !bytes.Equal(o.Resource.Answer, lifecycle.EncodeAnswer(o.Resource)) {
		t.Fatalf("created resource gen %d rev %d answer %s", o.Resource.Generation, o.Resource.Revision, o.Resource.Answer)
	}
	k := o.Resource.Key
	a, err := st.(store.ExactReader).ExactAnswer(ctx, k, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Body, o.Resource.Answer) {
		t.Errorf("the exact read answers\n%s\nnot the create's\n%s", a.Body, o.Resource.Answer)
	}

	again, err := commit(t, st, e, applyOf(e, ref, "cache", false, o.UID, 1))
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.UID != o.UID || again.Resource.Revision != 1 || again.Resource.Answer != nil {
		t.Errorf("unchanged re-apply outcome %+v (revision %d, answer %s)", again, again.Resource.Revision, again.Resource.Answer)
	}
	if got := lifecycle.AnswerBytes(again.Resource); !bytes.Equal(got, a.Body) {
		t.Errorf("the unchanged re-apply answers\n%s\nnot the stored\n%s", got, a.Body)
	}

	_, err = commit(t, st, e, applyOf(e, ref, "cache", true, "", 0))
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.GenerationConflict || we.HostCode != "name_taken" {
		t.Fatalf("a second create of the name: %v, want generation_conflict name_taken", err)
	}

	del := &lifecycle.Mutation{Action: store.ActionDelete, Principal: "p", Key: k, Ref: ref, Generation: 1}
	gone, err := commit(t, st, e, del)
	if err != nil {
		t.Fatal(err)
	}
	if gone.Action != store.ActionDelete || gone.Resource != nil || gone.UID != "" || gone.Created {
		t.Errorf("delete outcome %+v", gone)
	}
	if _, err := st.(store.ExactReader).ExactAnswer(ctx, k, ref); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the exact read after the delete: %v, want not found", err)
	}
}

// TestAcceptThenSettle: an accepted create writes no resource and records
// a pending operation; its settle creates the incarnation and stores the
// terminal document with the resource's answer bytes.
func TestAcceptThenSettle(t *testing.T) {
	e, st, ref := engineOn(t)
	ctx := context.Background()
	m := applyOf(e, ref, "later", true, "", 0)
	var op *store.Operation
	err := st.Update(ctx, func(tx store.Tx) error {
		ks, err := tx.KeyState(m.Key, nil)
		if err != nil {
			return err
		}
		o, err := e.Accept(tx, m, ks, time.Now(), time.Hour)
		if err != nil {
			return err
		}
		if o.Resource != nil || o.Created || o.UID != "" || o.Operation == nil {
			t.Errorf("accept outcome %+v", o)
		}
		op = o.Operation
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.(store.ExactReader).ExactAnswer(ctx, m.Key, ref); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an accepted create wrote the resource: %v", err)
	}
	var pending wire.Operation
	if err := json.Unmarshal(op.Document, &pending); err != nil || pending.Done || pending.ID != op.ID {
		t.Fatalf("pending document %s (%v)", op.Document, err)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		claimed, err := tx.ClaimOperation(op.ID)
		if err != nil {
			return err
		}
		op = claimed
		return e.Settle(tx, claimed)
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.(store.ExactReader).ExactAnswer(ctx, m.Key, ref)
	if err != nil {
		t.Fatal(err)
	}
	var done struct {
		Done   bool                       `json:"done"`
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(op.Document, &done); err != nil {
		t.Fatal(err)
	}
	if !op.Done || !done.Done || op.TargetUID != a.UID || !bytes.Equal(done.Result["resource"], a.Body) {
		t.Errorf("settled operation (done %v, target %s) %s; the stored answer of uid %s is %s", op.Done, op.TargetUID, op.Document, a.UID, a.Body)
	}
}
