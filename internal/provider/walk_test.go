package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/hosttest"
)

// walkType is the resource type whose create the walk measures: a KV
// namespace, which needs no relation target and no workerd.
const walkType = "takoform_edge_kv_namespace"

// TestWalkCreates is a measurement, not a check of behaviour:
// scripts/walk.sh (make walk) runs it twice with coverage counters on
// every package, applying TAKOFORM_WALK_CREATES creates of walkType
// through the provider's protocol server against an in-process host, and
// reads the code one create runs from the difference (ARCHITECTURE.md
// §4). Every run plans walkPlans creates, so
// the plans cancel out and only the applies differ. It fails when a
// create fails. Without TAKOFORM_WALK_CREATES it is skipped.
func TestWalkCreates(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("TAKOFORM_WALK_CREATES"))
	if err != nil {
		t.Skip("a measurement: scripts/walk.sh runs it with TAKOFORM_WALK_CREATES")
	}
	const walkPlans = 12
	if n < 0 || n > walkPlans {
		t.Fatalf("TAKOFORM_WALK_CREATES=%d: want 0 to %d", n, walkPlans)
	}
	h := hosttest.Start(t, hosttest.Options{Workerd: hosttest.NoWorkerd})
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer("walk", reg)()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ps, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(ps.Diagnostics) {
		t.Fatalf("provider schema: %v %v", err, ps.Diagnostics)
	}
	pt := ps.Provider.ValueType().(tftypes.Object)
	cfg := object(pt, map[string]tftypes.Value{
		"endpoint": tftypes.NewValue(tftypes.String, h.URL),
		"token":    tftypes.NewValue(tftypes.String, hosttest.TokenA1),
		"space":    tftypes.NewValue(tftypes.String, "walk"),
	})
	cr, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: dynamicOf(t, pt, cfg)})
	if err != nil || hasError(cr.Diagnostics) {
		t.Fatalf("configure: %v %v", err, cr.Diagnostics)
	}
	rs := ps.ResourceSchemas[walkType]
	if rs == nil {
		t.Fatalf("no schema for %s", walkType)
	}
	typ := rs.ValueType().(tftypes.Object)
	null := dynamicOf(t, typ, tftypes.NewValue(typ, nil))
	plans := make([]*tfprotov6.PlanResourceChangeResponse, walkPlans)
	configs := make([]*tfprotov6.DynamicValue, walkPlans)
	for i := range plans {
		c := dynamicOf(t, typ, object(typ, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, fmt.Sprintf("walk-%d", i))}))
		p, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: walkType, Config: c, ProposedNewState: c, PriorState: null})
		if err != nil || hasError(p.Diagnostics) {
			t.Fatalf("plan %d: %v %v", i, err, p.Diagnostics)
		}
		plans[i], configs[i] = p, c
	}
	for i := range n {
		a, err := srv.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: walkType, Config: configs[i],
			PriorState: null, PlannedState: plans[i].PlannedState, PlannedPrivate: plans[i].PlannedPrivate, PlannedIdentity: plans[i].PlannedIdentity})
		if err != nil || hasError(a.Diagnostics) {
			t.Fatalf("apply %d: %v %v", i, err, a.Diagnostics)
		}
	}
}

func hasError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}
