package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestServerAnswersAsTheFrameworkOnAHost: both servers of the Edge
// registry configured against one host (in-process, a real SQLite file;
// the configuration answered alike, through mux for ours) answer alike
// where the answer is the host's: the plan of a create, the
// read of a created resource (and the read after an import, which may
// set its identity), its import by ID and by identity, the plan and apply
// of an update of a provider-side attribute, the data source's read, and
// the destroy plan. Creates and deletes change the host, so each server
// creates and deletes its own resource and the answers are compared with
// the name and uid of one set to the other's.
func TestServerAnswersAsTheFrameworkOnAHost(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	_, fw, srv := servers(t)
	ctx := context.Background()
	d := differential{fw: fw, srv: srv}
	pcfg := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"endpoint": tftypes.String, "space": tftypes.String, "token": tftypes.String,
		"ca_certificate": tftypes.String, "ca_certificate_file": tftypes.String, "create_lane": tftypes.String}}
	conf := object(pcfg, map[string]tftypes.Value{"endpoint": str64(h.URL), "space": str64("diff"), "token": str64(hosttest.TokenA1)})
	configure := &tfprotov6.ConfigureProviderRequest{Config: dynamicOf(t, pcfg, conf)}
	compare(t, "configure", pcfg, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ConfigureProvider(ctx, configure) })
	if resp, err := srv.ConfigureProvider(ctx, configure); err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, resp.Diagnostics)
	}
	const name = "takoform_edge_kv_namespace"
	pt := serverOf(t, srv).types[name]
	dt := serverOf(t, srv).data[name]
	typ := pt.rules.typ
	dv := func(ty tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue { return dynamicOf(t, ty, v) }
	null := tftypes.NewValue(typ, nil)

	// each server plans and creates its own namespace
	created := map[tfprotov6.ProviderServer]*tfprotov6.ApplyResourceChangeResponse{}
	for s, ns := range map[tfprotov6.ProviderServer]string{srv: "kv-go", fw: "kv-fw"} {
		cfg := object(typ, map[string]tftypes.Value{"name": str64(ns)})
		plan := &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: dv(typ, cfg), ProposedNewState: dv(typ, cfg), PriorState: dv(typ, null)}
		compare(t, "plan create "+ns, typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.PlanResourceChange(ctx, plan) })
		planned, err := s.PlanResourceChange(ctx, plan)
		if err != nil || len(planned.Diagnostics) > 0 {
			t.Fatalf("plan %s: %v %v", ns, err, planned.Diagnostics)
		}
		resp, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: name, Config: dv(typ, cfg),
			PlannedState: planned.PlannedState, PriorState: dv(typ, null), PlannedIdentity: planned.PlannedIdentity})
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("create %s: %v %v", ns, err, resp.Diagnostics)
		}
		created[s] = resp
	}
	goState, fwState := decoded(t, typ, created[srv].NewState), decoded(t, typ, created[fw].NewState)
	if g, w := answerOf(t, typ, created[srv]), answerOf(t, typ, renamed(t, created[fw], typ, fwState, goState)); g != w {
		t.Errorf("create, the framework's names as the plugin-go server's:\nplugin-go:\n%s\nframework:\n%s", g, w)
	}
	state, ident := created[srv].NewState, created[srv].NewIdentity

	for pname, private := range map[string][]byte{"": nil, " after an import": importMarked} {
		read := &tfprotov6.ReadResourceRequest{TypeName: name, CurrentState: state, CurrentIdentity: ident, Private: private}
		compare(t, "read"+pname, typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ReadResource(ctx, read) })
	}
	for iname, req := range map[string]*tfprotov6.ImportResourceStateRequest{
		"id":       {TypeName: name, ID: "diff/kv-go"},
		"identity": {TypeName: name, Identity: ident},
		"absent":   {TypeName: name, ID: "diff/kv-none"},
	} {
		compare(t, "import "+iname, typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ImportResourceState(ctx, req) })
	}
	for dname, attrs := range map[string]map[string]tftypes.Value{"present": {"name": str64("kv-go")}, "absent": {"name": str64("kv-none")}} {
		req := &tfprotov6.ReadDataSourceRequest{TypeName: name, Config: dv(dt.typ, object(dt.typ, attrs))}
		compare(t, "read data "+dname, dt.typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ReadDataSource(ctx, req) })
	}

	// an update of a provider-side attribute: planned and applied alike
	var attrs map[string]tftypes.Value
	if err := goState.As(&attrs); err != nil {
		t.Fatal(err)
	}
	cfgAttrs := map[string]tftypes.Value{"name": attrs["name"], "delete_timeout": str64("5m")}
	cfg := object(typ, cfgAttrs)
	proposed := object(typ, with(attrs, "delete_timeout", str64("5m")))
	plan := &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: dv(typ, cfg), ProposedNewState: dv(typ, proposed), PriorState: state, PriorIdentity: ident}
	compare(t, "plan update", typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.PlanResourceChange(ctx, plan) })
	planned, err := srv.PlanResourceChange(ctx, plan)
	if err != nil || len(planned.Diagnostics) > 0 {
		t.Fatalf("plan update: %v %v", err, planned.Diagnostics)
	}
	update := &tfprotov6.ApplyResourceChangeRequest{TypeName: name, Config: dv(typ, cfg), PlannedState: planned.PlannedState,
		PriorState: state, PlannedIdentity: planned.PlannedIdentity}
	compare(t, "apply update", typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ApplyResourceChange(ctx, update) })

	destroy := &tfprotov6.PlanResourceChangeRequest{TypeName: name, Config: dv(typ, null), ProposedNewState: dv(typ, null), PriorState: state, PriorIdentity: ident}
	compare(t, "plan destroy", typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.PlanResourceChange(ctx, destroy) })
	deleted := map[tfprotov6.ProviderServer]*tfprotov6.ApplyResourceChangeResponse{}
	for s, c := range created {
		resp, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: name, Config: dv(typ, null),
			PlannedState: dv(typ, null), PriorState: c.NewState, PlannedIdentity: c.NewIdentity})
		if err != nil {
			t.Fatal(err)
		}
		deleted[s] = resp
	}
	sameAnswer(t, "delete", typ, deleted[srv], deleted[fw])
	if len(deleted[srv].Diagnostics) > 0 {
		t.Errorf("delete: %v", deleted[srv].Diagnostics)
	}
	gone := &tfprotov6.ReadResourceRequest{TypeName: name, CurrentState: state, CurrentIdentity: ident}
	compare(t, "read after delete", typ, d, func(s tfprotov6.ProviderServer) (any, error) { return s.ReadResource(ctx, gone) })
}

// renamed is resp, a create's answer whose state is from, with the
// name and uid of from replaced by those of to, in state and identity,
// and each condition's last_transition_time by to's (the two creates are
// stamped by the host's clock apart, and may fall in different seconds).
func renamed(t *testing.T, resp *tfprotov6.ApplyResourceChangeResponse, typ tftypes.Object, from, to tftypes.Value) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	var f, g map[string]tftypes.Value
	if err := from.As(&f); err != nil {
		t.Fatal(err)
	}
	if err := to.As(&g); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "uid"} {
		f[k] = g[k]
	}
	f["conditions"] = stampedAs(t, f["conditions"], g["conditions"])
	out := *resp
	out.NewState = dynamicOf(t, typ, tftypes.NewValue(typ, f))
	var id map[string]tftypes.Value
	if err := decoded(t, identityType, resp.NewIdentity.IdentityData).As(&id); err != nil {
		t.Fatal(err)
	}
	id["name"] = g["name"]
	out.NewIdentity = &tfprotov6.ResourceIdentityData{IdentityData: dynamicOf(t, identityType, tftypes.NewValue(identityType, id))}
	return &out
}

// stampedAs is the conditions list from with each element's
// last_transition_time that of the same element of to; from as it is
// when the lists differ in length (the comparison then shows it).
func stampedAs(t *testing.T, from, to tftypes.Value) tftypes.Value {
	t.Helper()
	var fs, ts []tftypes.Value
	if err := from.As(&fs); err != nil {
		t.Fatal(err)
	}
	if err := to.As(&ts); err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(ts) {
		return from
	}
	out := make([]tftypes.Value, len(fs))
	for i := range fs {
		var fc, tc map[string]tftypes.Value
		if err := fs[i].As(&fc); err != nil {
			t.Fatal(err)
		}
		if err := ts[i].As(&tc); err != nil {
			t.Fatal(err)
		}
		fc["last_transition_time"] = tc["last_transition_time"]
		out[i] = tftypes.NewValue(fs[i].Type(), fc)
	}
	return tftypes.NewValue(from.Type(), out)
}
