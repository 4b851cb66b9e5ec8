package provider

import (
	"context"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The fast path's plan against the framework's own, request for request
// (repo decision 0028): both servers of one registry, neither configured (so
// ModifyPlan makes no host call), answer the same PlanResourceChange and
// must agree on the planned state, identity, private data, replacement
// paths and diagnostics; each case also states what it plans.

type planCase struct {
	name             string
	typ              string
	config, prior    map[string]tftypes.Value // nil config: a destroy; nil prior: a create
	unknownConfig    string                   // an attribute whose configuration is unknown
	wantUnknown      []string                 // attributes planned unknown
	wantKnown        map[string]tftypes.Value // attributes planned with these values
	wantReplace      []string
	wantDestroy      bool
	wantNoChange     bool // the plan is the prior state
	wantIdentityNull bool
	wantError        string // the plan is refused with one error whose summary holds this
}

func str64(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func TestFastPlanMatchesFramework(t *testing.T) {
	reg, fw, srv := servers(t)
	fast := serverOf(t, srv)
	for name := range reg.Types {
		if fast.types[name] == nil {
			t.Errorf("%s has no fast path: the framework plans and reads it", name)
		}
	}
	ctx := context.Background()
	for _, s := range []tfprotov6.ProviderServer{fw, srv} {
		if _, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	kv := map[string]tftypes.Value{"name": str64("ns-1")}
	kvState := appliedState(t, reg.Types["takoform_edge_kv_namespace"], kv)
	queue := map[string]tftypes.Value{"name": str64("q-1"), "message_retention_seconds": tftypes.NewValue(tftypes.Number, big.NewFloat(60))}
	queueState := appliedState(t, reg.Types["takoform_at_least_once_queue"], queue)
	version := map[string]tftypes.Value{"revision_owner": str64("w"), "worker": str64("w"), "bundle": str64("b"),
		"handlers": tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, []tftypes.Value{str64("fetch")})}
	envelopeUnknown := []string{"uid", "generation", "revision", "conditions", "ready", "outputs_json", "form_api_version", "form_kind",
		"form_definition_version", "form_schema_digest", "form_package_digest", "relation_drift_reason", "pending_operation_id", "space"}
	cases := []planCase{
		{name: "create", typ: "takoform_edge_kv_namespace", config: kv, wantUnknown: envelopeUnknown, wantIdentityNull: true},
		{name: "no-op", typ: "takoform_edge_kv_namespace", config: kv, prior: kvState, wantNoChange: true},
		{name: "update of a provider-side attribute", typ: "takoform_edge_kv_namespace", prior: kvState,
			// the spec is unchanged: ModifyPlan keeps what the host reported;
			// space, unknown when the modifiers ran, is named for replacement
			// and OpenTofu drops the name as its planned value did not change
			config: with(kv, "delete_timeout", str64("5m")), wantReplace: []string{"space"},
			wantKnown: map[string]tftypes.Value{"uid": kvState["uid"], "generation": kvState["generation"], "ready": kvState["ready"],
				"form_kind": kvState["form_kind"], "delete_timeout": str64("5m"), "space": kvState["space"]}},
		{name: "replace on a new name", typ: "takoform_edge_kv_namespace", prior: kvState, config: with(kv, "name", str64("ns-2")),
			wantReplace: []string{"name", "space"}, wantKnown: map[string]tftypes.Value{"uid": kvState["uid"]}},
		{name: "replace on a new space", typ: "takoform_edge_kv_namespace", prior: kvState, config: with(kv, "space", str64("other")),
			wantReplace: []string{"space"}},
		{name: "destroy", typ: "takoform_edge_kv_namespace", prior: kvState, wantDestroy: true},
		{name: "unknown name", typ: "takoform_edge_kv_namespace", config: kv, prior: kvState, unknownConfig: "name",
			wantUnknown: []string{"name", "generation"}, wantReplace: []string{"name", "space"}},
		{name: "unknown space keeps no state", typ: "takoform_edge_kv_namespace", config: kv, prior: kvState, unknownConfig: "space",
			wantUnknown: []string{"space"}, wantReplace: []string{"space"}},
		{name: "unknown timeout", typ: "takoform_edge_kv_namespace", config: kv, prior: kvState, unknownConfig: "delete_timeout",
			wantUnknown: []string{"delete_timeout"}, wantReplace: []string{"space"}, wantKnown: map[string]tftypes.Value{"uid": kvState["uid"], "generation": kvState["generation"]}},
		{name: "create with a default", typ: "takoform_at_least_once_queue", config: queue, wantUnknown: []string{"uid"}, wantIdentityNull: true,
			wantKnown: map[string]tftypes.Value{"delivery_delay_seconds": tftypes.NewValue(tftypes.Number, big.NewFloat(0))}},
		{name: "update of a defaulted field", typ: "takoform_at_least_once_queue", prior: queueState,
			config:      with(queue, "delivery_delay_seconds", tftypes.NewValue(tftypes.Number, big.NewFloat(5))),
			wantUnknown: []string{"generation"}, wantReplace: []string{"space"}, wantKnown: map[string]tftypes.Value{"uid": queueState["uid"]}},
		{name: "no-op with a default", typ: "takoform_at_least_once_queue", config: queue, prior: queueState, wantNoChange: true},
		{name: "revision create with defaults", typ: "takoform_worker_version", config: version, wantUnknown: []string{"uid"}, wantIdentityNull: true,
			wantKnown: map[string]tftypes.Value{"kv_bindings": tftypes.NewValue(reg.Types["takoform_worker_version"].Schema.Attributes["kv_bindings"].GetType().TerraformType(context.Background()), []tftypes.Value{})}},
		{name: "revision unknown bundle", typ: "takoform_worker_version", config: version, unknownConfig: "bundle", wantUnknown: []string{"bundle", "name"}, wantIdentityNull: true},
		// this build creates worker versions under the v1alpha1 ref, which has no assets
		{name: "revision with assets", typ: "takoform_worker_version", config: withAssets(version, str64("site")), wantError: "has no member for assets"},
		{name: "revision with unknown assets", typ: "takoform_worker_version", config: version, unknownConfig: "assets", wantUnknown: []string{"assets", "uid"}, wantIdentityNull: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := fast.types[c.typ]
			if ft == nil {
				t.Fatalf("%s has no fast path", c.typ)
			}
			req := planRequest(t, ft, c)
			want, err := fw.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := srv.PlanResourceChange(ctx, planRequest(t, ft, c))
			if err != nil {
				t.Fatal(err)
			}
			samePlan(t, ft, got, want)
			checkPlan(t, ft, c, got)
		})
	}
}

// appliedState is a state as apply records it: config with every
// computed attribute known (defaults as the schema declares them).
func appliedState(t *testing.T, spec *TypeSpec, config map[string]tftypes.Value) map[string]tftypes.Value {
	t.Helper()
	ref := spec.Create.Ref
	s := with(config, "space", str64("s1"))
	for k, v := range map[string]string{"uid": "u-1", "generation": "1", "revision": "r-1", "outputs_json": "{}",
		"form_api_version": ref.APIVersion, "form_kind": ref.Kind, "form_definition_version": ref.DefinitionVersion,
		"form_schema_digest": ref.SchemaDigest, "form_package_digest": "sha256:00"} {
		s[k] = str64(v)
	}
	s["ready"] = tftypes.NewValue(tftypes.Bool, true)
	rules, err := planRulesOf(spec.Attrs)
	if err != nil {
		t.Fatal(err)
	}
	s["conditions"] = tftypes.NewValue(rules.attrs["conditions"].typ, []tftypes.Value{})
	for name, a := range rules.attrs {
		if _, set := s[name]; !set && a.Default != nil {
			s[name] = *a.Default
		}
	}
	return s
}

func with(m map[string]tftypes.Value, k string, v tftypes.Value) map[string]tftypes.Value {
	out := map[string]tftypes.Value{k: v}
	for mk, mv := range m {
		if mk != k {
			out[mk] = mv
		}
	}
	return out
}

// object is attrs as a value of typ, the attributes not given null.
func object(typ tftypes.Object, attrs map[string]tftypes.Value) tftypes.Value {
	full := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		if v, ok := attrs[name]; ok {
			full[name] = v
		} else {
			full[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(typ, full)
}

// planRequest is the request OpenTofu sends for c: its proposed new state
// is the configuration with each computed attribute it leaves null taken
// from the prior state (OpenTofu's objchange.ProposedNew, at the top level).
func planRequest(t *testing.T, ft *protoType, c planCase) *tfprotov6.PlanResourceChangeRequest {
	t.Helper()
	typ := ft.rules.typ
	dv := func(ty tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue { return dynamicOf(t, ty, v) }
	config, proposed, prior := tftypes.NewValue(typ, nil), tftypes.NewValue(typ, nil), tftypes.NewValue(typ, nil)
	if c.prior != nil {
		prior = object(typ, c.prior)
	}
	if c.config != nil {
		cfg := c.config
		if c.unknownConfig != "" {
			cfg = with(cfg, c.unknownConfig, tftypes.NewValue(typ.AttributeTypes[c.unknownConfig], tftypes.UnknownValue))
		}
		config = object(typ, cfg)
		prop := map[string]tftypes.Value{}
		for name, a := range ft.rules.attrs {
			v, set := cfg[name]
			if !set && a.Computed && c.prior != nil {
				v, set = c.prior[name]
			}
			if set {
				prop[name] = v
			}
		}
		proposed = object(typ, prop)
	}
	req := &tfprotov6.PlanResourceChangeRequest{TypeName: c.typ, Config: dv(typ, config), ProposedNewState: dv(typ, proposed), PriorState: dv(typ, prior)}
	if c.prior != nil {
		e := envelope{Name: stringOf(c.prior["name"]), Space: stringOf(c.prior["space"])}
		e.Ref.APIVersion, e.Ref.Kind = stringOf(c.prior["form_api_version"]), stringOf(c.prior["form_kind"])
		e.Ref.DefinitionVersion, e.Ref.SchemaDigest = stringOf(c.prior["form_definition_version"]), stringOf(c.prior["form_schema_digest"])
		id := map[string]tftypes.Value{}
		for _, m := range identityMembers {
			id[m.attr] = str64(m.state(e))
		}
		req.PriorIdentity = &tfprotov6.ResourceIdentityData{IdentityData: dv(identityType, tftypes.NewValue(identityType, id))}
	}
	return req
}

func stringOf(v tftypes.Value) string {
	var s string
	if err := v.As(&s); err != nil {
		return ""
	}
	return s
}

func samePlan(t *testing.T, ft *protoType, got, want *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	if g, w := decoded(t, ft.rules.typ, got.PlannedState), decoded(t, ft.rules.typ, want.PlannedState); !g.Equal(w) {
		t.Errorf("planned state:\n fast      %s\n framework %s", g, w)
	}
	if g, w := decoded(t, identityType, identityValue(got)), decoded(t, identityType, identityValue(want)); !g.Equal(w) {
		t.Errorf("planned identity: fast %s, framework %s", g, w)
	}
	if string(got.PlannedPrivate) != string(want.PlannedPrivate) {
		t.Errorf("planned private: fast %q, framework %q", got.PlannedPrivate, want.PlannedPrivate)
	}
	if g, w := pathStrings(got.RequiresReplace), pathStrings(want.RequiresReplace); !slices.Equal(g, w) {
		t.Errorf("requires replace: fast %v, framework %v", g, w)
	}
	if len(got.Diagnostics) != len(want.Diagnostics) {
		t.Fatalf("diagnostics: fast %v, framework %v", got.Diagnostics, want.Diagnostics)
	}
	for i, g := range got.Diagnostics {
		w := want.Diagnostics[i]
		if g.Severity != w.Severity || g.Summary != w.Summary || g.Detail != w.Detail || pathString(g.Attribute) != pathString(w.Attribute) {
			t.Errorf("diagnostic %d: fast %+v, framework %+v", i, g, w)
		}
	}
}

func checkPlan(t *testing.T, ft *protoType, c planCase, got *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	if c.wantError != "" {
		if len(got.Diagnostics) != 1 || !strings.Contains(got.Diagnostics[0].Summary, c.wantError) {
			t.Errorf("diagnostics %v, want one error holding %q", got.Diagnostics, c.wantError)
		}
		return
	}
	for _, d := range got.Diagnostics {
		t.Errorf("diagnostic: %s: %s", d.Summary, d.Detail)
	}
	planned := decoded(t, ft.rules.typ, got.PlannedState)
	if c.wantDestroy != planned.IsNull() {
		t.Fatalf("planned %s; a destroy: %v", planned, c.wantDestroy)
	}
	if c.wantNoChange && !planned.Equal(object(ft.rules.typ, c.prior)) {
		t.Errorf("a no-op plans a change: %s", planned)
	}
	if c.wantIdentityNull != decoded(t, identityType, identityValue(got)).IsNull() {
		t.Errorf("planned identity null: %v, want %v", !c.wantIdentityNull, c.wantIdentityNull)
	}
	var want []*tftypes.AttributePath
	for _, a := range c.wantReplace {
		want = append(want, tftypes.NewAttributePath().WithAttributeName(a))
	}
	if g := pathStrings(got.RequiresReplace); !slices.Equal(g, pathStrings(want)) {
		t.Errorf("requires replace %v, want %v", g, c.wantReplace)
	}
	if planned.IsNull() {
		return
	}
	var attrs map[string]tftypes.Value
	if err := planned.As(&attrs); err != nil {
		t.Fatal(err)
	}
	for _, a := range c.wantUnknown {
		if attrs[a].IsKnown() {
			t.Errorf("%s planned %s, want unknown", a, attrs[a])
		}
	}
	for a, v := range c.wantKnown {
		if !attrs[a].Equal(v) {
			t.Errorf("%s planned %s, want %s", a, attrs[a], v)
		}
	}
}

func decoded(t *testing.T, typ tftypes.Type, dv *tfprotov6.DynamicValue) tftypes.Value {
	t.Helper()
	if dv == nil {
		return tftypes.NewValue(typ, nil)
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func identityValue(r *tfprotov6.PlanResourceChangeResponse) *tfprotov6.DynamicValue {
	if r.PlannedIdentity == nil {
		return nil
	}
	return r.PlannedIdentity.IdentityData
}

func pathStrings(ps []*tftypes.AttributePath) []string {
	var out []string
	for _, p := range ps {
		out = append(out, pathString(p))
	}
	sort.Strings(out)
	return out
}

func pathString(p *tftypes.AttributePath) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// TestFastUpgradeAndReadMatchFramework: a state at the current version
// (an attribute the schema lacks ignored, at the top and in a nested
// object; numbers, a number and a bool sent as strings, a set, a list of
// objects, null; a bad one refused: a wrong type, trailing or truncated
// JSON) upgrades as the framework upgrades it, and a read before any
// configuration fails as the framework's does.
func TestFastUpgradeAndReadMatchFramework(t *testing.T) {
	reg, fw, srv := servers(t)
	ctx := context.Background()
	const typ = "takoform_edge_kv_namespace"
	for _, c := range []struct{ typ, raw string }{
		{typ, `{"name":"ns-1","space":"s1","uid":"u-1","gone":"x"}`},
		{typ, `{"name":1}`},
		{typ, `{"name":"ns-1"`},
		{typ, `{"name":"ns-1"} {}`},
		{typ, `null`},
		{typ, `{"name":"ns-1","ready":"true","generation":"3"}`},
		{typ, `{"name":"ns-1","ready":true,"conditions":[{"type":"Ready","status":"True","extra":1,"message":null}],"outputs_json":"{}"}`},
		{typ, `{"name":"ns-1","conditions":[{"type":1}]}`},
		{"takoform_queue_consumer", `{"name":"c","max_batch_size":10,"retry_delay_seconds":1.5e3,"max_concurrency":null}`},
		{"takoform_queue_consumer", `{"name":"c","max_retries":"3"}`},
		{"takoform_queue_consumer", `{"name":"c","max_batch_size":true}`},
		{"takoform_worker_version", `{"name":"v","handlers":["fetch","queue"],"required_sensitive_vars":[]}`},
	} {
		req := &tfprotov6.UpgradeResourceStateRequest{TypeName: c.typ, Version: reg.Types[c.typ].Schema.Version, RawState: &tfprotov6.RawState{JSON: []byte(c.raw)}}
		raw := c.typ + " " + c.raw
		want, err := fw.UpgradeResourceState(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := srv.UpgradeResourceState(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ft := serverOf(t, srv).types[c.typ]
		if g, w := decoded(t, ft.rules.typ, got.UpgradedState), decoded(t, ft.rules.typ, want.UpgradedState); !g.Equal(w) {
			t.Errorf("%s: upgraded fast %s, framework %s", raw, g, w)
		}
		if len(got.Diagnostics) != len(want.Diagnostics) || (len(got.Diagnostics) > 0 && got.Diagnostics[0].Summary != want.Diagnostics[0].Summary) {
			t.Errorf("%s: diagnostics fast %v, framework %v", raw, got.Diagnostics, want.Diagnostics)
		}
	}
	state := appliedState(t, reg.Types[typ], map[string]tftypes.Value{"name": str64("ns-1")})
	ft := serverOf(t, srv).types[typ]
	dv, err := tfprotov6.NewDynamicValue(ft.rules.typ, object(ft.rules.typ, state))
	if err != nil {
		t.Fatal(err)
	}
	req := &tfprotov6.ReadResourceRequest{TypeName: typ, CurrentState: &dv}
	want, err := fw.ReadResource(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := srv.ReadResource(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Diagnostics) == 0 || len(got.Diagnostics) != len(want.Diagnostics) || got.Diagnostics[0].Summary != want.Diagnostics[0].Summary || got.Diagnostics[0].Detail != want.Diagnostics[0].Detail {
		t.Errorf("unconfigured read: fast %+v, framework %+v", got.Diagnostics, want.Diagnostics)
	}
}

func serverOf(t *testing.T, srv tfprotov6.ProviderServer) *protoServer {
	t.Helper()
	inner, ok := inMux.Load(srv)
	if !ok {
		t.Fatalf("%T is no server muxed made", srv)
	}
	return inner.(*protoServer)
}

// inMux is our server in each muxed server that muxed made.
var inMux sync.Map

// muxed is NewServer's muxed server over reg, whose plugin-go server
// serverOf finds.
func muxed(t *testing.T, reg *Registry) tfprotov6.ProviderServer {
	t.Helper()
	srv, inner, err := newServers("test", reg)
	if err != nil {
		t.Fatal(err)
	}
	inMux.Store(srv, inner)
	return srv
}

// servers are the framework's server and NewServer's over the Edge
// registry.
func servers(t *testing.T) (*Registry, tfprotov6.ProviderServer, tfprotov6.ProviderServer) {
	t.Helper()
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	fw, err := providerserver.NewProtocol6WithError(New("test", reg)())()
	if err != nil {
		t.Fatal(err)
	}
	return reg, fw, muxed(t, reg)
}

// TestFastValidateMatchesFramework: configurations valid and not (a
// read-only attribute set, a required one missing, unknown values, a
// nested required member missing) validate as the framework validates
// them; the framework reports in no fixed order, so as sets.
func TestFastValidateMatchesFramework(t *testing.T) {
	_, fw, srv := servers(t)
	ctx := context.Background()
	bundle := serverOf(t, srv).types["takoform_worker_bundle"]
	if bundle == nil {
		t.Fatal("takoform_worker_bundle has no fast path")
	}
	modType := bundle.rules.attrs["modules"].typ
	modElem, ok := modType.(tftypes.List)
	if !ok {
		t.Fatalf("modules is a %s", modType)
	}
	elemType, ok := modElem.ElementType.(tftypes.Object)
	if !ok {
		t.Fatalf("a module is a %s", modElem.ElementType)
	}
	module := func(name tftypes.Value) tftypes.Value {
		return object(elemType, map[string]tftypes.Value{"name": name, "content_file": str64("a.js")})
	}
	cases := []struct {
		name, typ string
		attrs     map[string]tftypes.Value
		wantDiags int
	}{
		{"valid", "takoform_edge_kv_namespace", map[string]tftypes.Value{"name": str64("ns-1")}, 0},
		{"read-only set", "takoform_edge_kv_namespace", map[string]tftypes.Value{"name": str64("ns-1"), "uid": str64("u")}, 1},
		{"required missing", "takoform_edge_kv_namespace", map[string]tftypes.Value{}, 1},
		{"unknown name", "takoform_edge_kv_namespace", map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}, 0},
		{"nested required missing", "takoform_worker_bundle", map[string]tftypes.Value{"name": str64("b"),
			"modules": tftypes.NewValue(modType, []tftypes.Value{module(str64("m.js")), module(tftypes.NewValue(tftypes.String, nil))})}, 1},
		// the framework reads the members of an unknown element as null
		{"unknown module", "takoform_worker_bundle", map[string]tftypes.Value{"name": str64("b"),
			"modules": tftypes.NewValue(modType, []tftypes.Value{tftypes.NewValue(elemType, tftypes.UnknownValue)})}, 1},
		// a single nested object (WorkerVersion.assets): its members are
		// checked at their own paths
		{"assets", "takoform_worker_version", withAssets(versionConfig(), str64("site")), 0},
		{"assets member missing", "takoform_worker_version", withAssets(versionConfig(), tftypes.NewValue(tftypes.String, nil)), 1},
		{"unknown assets", "takoform_worker_version", with(versionConfig(), "assets", tftypes.NewValue(assetsType, tftypes.UnknownValue)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := serverOf(t, srv).types[c.typ]
			dv, err := tfprotov6.NewDynamicValue(ft.rules.typ, object(ft.rules.typ, c.attrs))
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: c.typ, Config: &dv}
			want, err := fw.ValidateResourceConfig(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := srv.ValidateResourceConfig(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			g, w := diagStrings(got.Diagnostics), diagStrings(want.Diagnostics)
			if !slices.Equal(g, w) {
				t.Errorf("fast %q\nframework %q", g, w)
			}
			if len(g) != c.wantDiags {
				t.Errorf("%d diagnostics, want %d: %q", len(g), c.wantDiags, g)
			}
		})
	}
}

// assetsType is the Terraform type of WorkerVersion.assets.
var assetsType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"bundle": tftypes.String, "run_worker_first": tftypes.Bool, "not_found_handling": tftypes.String}}

// versionConfig is a worker version configuration without assets.
func versionConfig() map[string]tftypes.Value {
	return map[string]tftypes.Value{"revision_owner": str64("w"), "worker": str64("w"), "bundle": str64("b"),
		"handlers": tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, []tftypes.Value{str64("fetch")})}
}

// withAssets is config with assets of the given bundle.
func withAssets(config map[string]tftypes.Value, bundle tftypes.Value) map[string]tftypes.Value {
	return with(config, "assets", tftypes.NewValue(assetsType, map[string]tftypes.Value{"bundle": bundle,
		"run_worker_first": tftypes.NewValue(tftypes.Bool, false), "not_found_handling": str64("none")}))
}

func diagStrings(ds []*tfprotov6.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+"|"+d.Summary+"|"+d.Detail+"|"+pathString(d.Attribute))
	}
	sort.Strings(out)
	return out
}

// TestFastApplyMatchesFramework: a create and a delete that reach the
// resource before a provider configuration give the same new state,
// identity and diagnostics from the fast path as from the framework (a
// create or delete against a host goes through the fast path in every
// acceptance test).
func TestFastApplyMatchesFramework(t *testing.T) {
	reg, fw, srv := servers(t)
	ctx := context.Background()
	const typ = "takoform_edge_kv_namespace"
	ft := serverOf(t, srv).types[typ]
	ot := ft.rules.typ
	config := map[string]tftypes.Value{"name": str64("ns-1")}
	full := appliedState(t, reg.Types[typ], config)
	null := tftypes.NewValue(ot, nil)
	cfg := map[string]tftypes.Value{}
	for n, v := range full {
		cfg[n] = tftypes.NewValue(v.Type(), nil)
	}
	cfg["name"] = str64("ns-1")
	planned := map[string]tftypes.Value{}
	for n, v := range full {
		planned[n] = tftypes.NewValue(v.Type(), tftypes.UnknownValue)
	}
	planned["name"] = str64("ns-1")
	cases := map[string]struct{ config, planned, prior tftypes.Value }{
		"create": {object(ot, cfg), object(ot, planned), null},
		"delete": {null, null, object(ot, full)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req := &tfprotov6.ApplyResourceChangeRequest{TypeName: typ,
				Config: dynamicOf(t, ot, c.config), PlannedState: dynamicOf(t, ot, c.planned), PriorState: dynamicOf(t, ot, c.prior)}
			want, err := fw.ApplyResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := srv.ApplyResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Diagnostics) == 0 {
				t.Fatal("the framework applied without a configured provider; the case tests nothing")
			}
			if g, w := diagStrings(got.Diagnostics), diagStrings(want.Diagnostics); !slices.Equal(g, w) {
				t.Errorf("diagnostics fast %v, framework %v", g, w)
			}
			if g, w := decoded(t, ot, got.NewState), decoded(t, ot, want.NewState); !g.Equal(w) {
				t.Errorf("new state fast %s, framework %s", g, w)
			}
		})
	}
}

// dynamicOf is v encoded as a plugin-protocol value of type ty.
func dynamicOf(t *testing.T, ty tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(ty, v)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}
