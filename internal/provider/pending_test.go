package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// Client resumption (spec/host-api-v1alpha3.md §4, decision 0017 rules 6–7, repo decision
// 0003), case by case against a real host: the provider's Read and Delete
// are called directly with state holding pending_operation_id.

type pendingFixture struct {
	t   *testing.T
	c   *client.Client
	r   *Resource
	ref form.FormRef
}

// newPendingFixture starts a host whose mutations answer 202 and settle
// after delay, and a takoform_edge_kv_namespace resource configured
// against it.
func newPendingFixture(t *testing.T, delay time.Duration) *pendingFixture {
	h := hosttest.Start(t, hosttest.Options{ProvisioningDelay: delay, SyncBudget: 20 * time.Millisecond})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	spec := reg.Types["takoform_edge_kv_namespace"]
	return &pendingFixture{t: t, c: c, ref: spec.DefaultCreate, r: &Resource{spec: spec, data: &Data{Client: c, Space: "prod", Registry: reg}}}
}

// apply starts a create (pre empty) or update of name and returns the
// host's answer without waiting for an operation.
func (f *pendingFixture) apply(name string, pre client.Precondition) *client.Mutation {
	f.t.Helper()
	ctx := context.Background()
	req := wire.ResourceRequest{APIVersion: f.ref.APIVersion, Kind: f.ref.Kind, Form: wire.FormReference{FormRef: f.ref},
		Metadata: wire.Metadata{Name: name, Space: "prod"}, Spec: []byte("{}")}
	p, err := f.c.Prepare(ctx, req, pre.Generation)
	if err != nil {
		f.t.Fatal(err)
	}
	ar := wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: p.Resource.Spec,
		Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}, ExpectedUID: pre.UID}
	m, err := f.c.Apply(ctx, ar, pre)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// accept starts a mutation the host answers 202 and returns its operation.
func (f *pendingFixture) accept(name string, pre client.Precondition) *wire.Operation {
	f.t.Helper()
	m := f.apply(name, pre)
	if !m.Accepted() {
		f.t.Fatalf("apply of %s answered %d, not 202", name, m.Status)
	}
	return m.Operation
}

// create creates name and waits for it.
func (f *pendingFixture) create(name string) *wire.Resource {
	f.t.Helper()
	if m := f.apply(name, client.Precondition{}); m.Accepted() {
		if _, err := f.c.WaitOperation(context.Background(), m.Operation.ID); err != nil {
			f.t.Fatal(err)
		}
	}
	res, err := f.c.Read(context.Background(), client.Address{Space: "prod", Ref: f.ref, Name: name})
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// pendingState is state recorded for name with an unsettled operation
// (uid "" for a pending create).
func (f *pendingFixture) pendingState(name, uid, op string) map[string]any {
	return map[string]any{"name": name, "space": "prod", "uid": nilIfEmpty(uid), "pending_operation_id": op,
		"form_api_version": f.ref.APIVersion, "form_kind": f.ref.Kind, "form_definition_version": f.ref.DefinitionVersion, "form_schema_digest": f.ref.SchemaDigest}
}

func (f *pendingFixture) tfState(attrs map[string]any) tfsdk.State {
	f.t.Helper()
	v, err := fromGo(f.r.spec.ObjectType, attrs)
	if err != nil {
		f.t.Fatal(err)
	}
	return tfsdk.State{Schema: f.r.spec.Schema, Raw: v}
}

// read runs the provider's Read; next is nil when the resource was
// removed from state.
func (f *pendingFixture) read(state map[string]any) (next map[string]any, d diag.Diagnostics) {
	f.t.Helper()
	st := f.tfState(state)
	resp := resource.ReadResponse{State: tfsdk.State{Schema: st.Schema, Raw: st.Raw.Copy()}}
	f.r.Read(context.Background(), resource.ReadRequest{State: st}, &resp)
	if resp.State.Raw.IsNull() {
		return nil, resp.Diagnostics
	}
	next, err := attrsOf(resp.State.Raw)
	if err != nil {
		f.t.Fatal(err)
	}
	return next, resp.Diagnostics
}

func detail(d diag.Diagnostics) string {
	var b strings.Builder
	for _, x := range d {
		b.WriteString(x.Summary() + "\n" + x.Detail() + "\n")
	}
	return b.String()
}

func wantDiag(t *testing.T, d diag.Diagnostics, parts ...string) {
	t.Helper()
	text := detail(d)
	if !d.HasError() {
		t.Fatalf("no error; diagnostics:\n%s", text)
	}
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("the error lacks %q:\n%s", p, text)
		}
	}
}

const remedies = "Import the resource now under this name, restore the recorded one, or delete the replacement; state was kept."

// TestResumeWhileRunning: the operation is still running, so the absence
// of the resource is not deletion: state and marker are kept.
func TestResumeWhileRunning(t *testing.T) {
	f := newPendingFixture(t, time.Minute)
	op := f.accept("slow", client.Precondition{})
	next, d := f.read(f.pendingState("slow", "", op.ID))
	if d.HasError() || next == nil {
		t.Fatalf("a running create was dropped from state (diagnostics: %s)", detail(d))
	}
	if next["pending_operation_id"] != op.ID || next["uid"] != nil {
		t.Errorf("state changed while the operation runs: %v", next)
	}
}

// TestResumeAfterSuccess: a succeeded operation settles state from its
// verified result and clears the marker; a result whose UID is not the
// recorded one is refused.
func TestResumeAfterSuccess(t *testing.T) {
	f := newPendingFixture(t, 200*time.Millisecond)
	op := f.accept("done", client.Precondition{})
	settled, err := f.c.WaitOperation(context.Background(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	next, d := f.read(f.pendingState("done", "", op.ID))
	if d.HasError() || next == nil {
		t.Fatalf("read after success: %s", detail(d))
	}
	if next["pending_operation_id"] != nil || next["uid"] != settled.Target.UID || next["generation"] != "1" {
		t.Errorf("state not settled from the operation: %v", next)
	}
	other := f.create("other")
	_, d = f.read(f.pendingState("done", other.Metadata.UID, op.ID))
	wantDiag(t, d, "Cannot read takoform_edge_kv_namespace", `is not the expected UID "`+other.Metadata.UID)
}

// TestResumeAfterFailure: a failed (cancelled) create read once by a
// refresh lets the exact read decide: the name is free, so the resource
// is gone from state; when another incarnation holds the name, it is never
// bound — an error keeps state and names the remedies, and Delete refuses
// rather than delete the stranger.
func TestResumeAfterFailure(t *testing.T) {
	f := newPendingFixture(t, 2*time.Second) // long enough to cancel before the commit
	cancel := func(name string) string {
		op := f.accept(name, client.Precondition{})
		var of *client.OperationFailedError
		if _, err := f.c.CancelOperation(context.Background(), op.ID); err != nil && !errors.As(err, &of) {
			t.Fatal(err)
		}
		return op.ID
	}
	if next, d := f.read(f.pendingState("gone", "", cancel("gone"))); d.HasError() || next != nil {
		t.Errorf("a failed create with its name free: state %v, diagnostics %s", next, detail(d))
	}
	state := f.pendingState("taken", "", cancel("taken"))
	f.c, _ = client.New(context.Background(), f.c.Endpoint(), client.Options{Token: hosttest.TokenA1, KeyScope: "another client"})
	stranger := f.create("taken") // another client: its create is not a replay of the cancelled one
	next, d := f.read(state)
	wantDiag(t, d, "A different incarnation now holds this name", "Current UID: "+stranger.Metadata.UID, "Code: takoform.provider/uid-mismatch", remedies)
	if next == nil || next["pending_operation_id"] != state["pending_operation_id"] {
		t.Errorf("state was not kept: %v", next)
	}
	st := f.tfState(state)
	dresp := resource.DeleteResponse{State: tfsdk.State{Schema: st.Schema, Raw: st.Raw.Copy()}}
	f.r.Delete(context.Background(), resource.DeleteRequest{State: st}, &dresp)
	wantDiag(t, dresp.Diagnostics, "A different incarnation now holds this name", "Code: takoform.provider/uid-mismatch")
	if _, err := f.c.Read(context.Background(), client.Address{Space: "prod", Ref: f.ref, Name: "taken"}); err != nil {
		t.Errorf("the stranger was deleted: %v", err)
	}
}

// TestResumeOperationNotFound: an operation the host does not know (or no
// longer retains) lets the exact read decide: the resource is recorded
// when it exists, dropped when it does not, and a different UID under the
// recorded name is an error that keeps state and names the remedies.
func TestResumeOperationNotFound(t *testing.T) {
	f := newPendingFixture(t, 0)
	res := f.create("kept")
	next, d := f.read(f.pendingState("kept", "", "op_never-issued"))
	if d.HasError() || next == nil || next["uid"] != res.Metadata.UID || next["pending_operation_id"] != nil {
		t.Errorf("an unknown operation with the resource present: state %v, diagnostics %s", next, detail(d))
	}
	if next, d := f.read(f.pendingState("absent", "", "op_never-issued")); d.HasError() || next != nil {
		t.Errorf("an unknown operation with the resource absent: state %v, diagnostics %s", next, detail(d))
	}
	other := f.create("other")
	next, d = f.read(f.pendingState("kept", other.Metadata.UID, "op_never-issued"))
	wantDiag(t, d, "A different incarnation now holds this name", "Expected UID: "+other.Metadata.UID, "Current UID: "+res.Metadata.UID, remedies)
	if next == nil || next["uid"] != other.Metadata.UID {
		t.Errorf("state was not kept: %v", next)
	}
}
