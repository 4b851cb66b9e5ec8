package noopprovider_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/noopprovider"
	"github.com/takoform/takoform/internal/provider"
)

// The floor the budgets are stated against is noop_thing, one resource type
// with one required string attribute: anything wider would measure schema
// width, not the protocol.
func TestSchemaIsOneNameAttribute(t *testing.T) {
	srv, err := providerserver.NewProtocol6WithError(noopprovider.New())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("diagnostic: %s: %s", d.Summary, d.Detail)
	}
	if len(resp.ResourceSchemas) != 2 {
		t.Fatalf("resource types = %d, want noop_thing and noop_wide", len(resp.ResourceSchemas))
	}
	s := resp.ResourceSchemas["noop_thing"]
	if s == nil {
		t.Fatal("no noop_thing resource type")
	}
	attrs := s.Block.Attributes
	if len(attrs) != 1 || attrs[0].Name != "name" || !attrs[0].Required {
		t.Fatalf("noop_thing attributes = %+v, want one required name", attrs)
	}
}

// noop_wide, the second floor, has exactly the attributes of
// takoform_edge_kv_namespace: the same names, types and
// required/optional/computed flags, nested ones included. When the takoform
// envelope changes this fails until noop_wide follows.
func TestWideHasTheKVNamespaceShape(t *testing.T) {
	wide := resourceSchema(t, providerserver.NewProtocol6WithError(noopprovider.New()), "noop_wide")
	reg, err := provider.EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	kv := resourceSchema(t, providerserver.NewProtocol6WithError(provider.New("test", reg)()), "takoform_edge_kv_namespace")
	got, want := shape(wide), shape(kv)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("noop_wide attributes\n %v\nwant (takoform_edge_kv_namespace)\n %v", got, want)
	}
}

// noop_raw carries the identity of takoform_edge_kv_namespace: the same
// members, types and import flags, so OpenTofu's per-resource identity
// work is in the floor too.
func TestRawHasTheKVNamespaceIdentity(t *testing.T) {
	reg, err := provider.EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	got, want := identityShape(t, noopprovider.NewServer, noopprovider.RawType), identityShape(t, provider.NewServer("test", reg), "takoform_edge_kv_namespace")
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("noop_raw identity\n %v\nwant (takoform_edge_kv_namespace)\n %v", got, want)
	}
}

// identityShape lists the identity attributes of typeName as served by
// the server factory makes, one "name type flags version" each, sorted;
// none when it has no identity.
func identityShape(t *testing.T, factory func() (tfprotov6.ProviderServer, error), typeName string) []string {
	t.Helper()
	var out []string
	srv, err := factory()
	if err == nil {
		var resp *tfprotov6.GetResourceIdentitySchemasResponse
		if resp, err = srv.GetResourceIdentitySchemas(context.Background(), &tfprotov6.GetResourceIdentitySchemasRequest{}); err == nil && resp.IdentitySchemas[typeName] != nil {
			out = identityMembers(resp.IdentitySchemas[typeName])
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func identityMembers(s *tfprotov6.ResourceIdentitySchema) []string {
	var out []string
	for _, a := range s.IdentityAttributes {
		out = append(out, fmt.Sprintf("%s %s required=%t optional=%t v%d", a.Name, a.Type, a.RequiredForImport, a.OptionalForImport, s.Version))
	}
	sort.Strings(out)
	return out
}

func resourceSchema(t *testing.T, factory func() (tfprotov6.ProviderServer, error), typeName string) *tfprotov6.Schema {
	t.Helper()
	srv, err := factory()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	s := resp.ResourceSchemas[typeName]
	if s == nil {
		t.Fatalf("no %s resource type", typeName)
	}
	return s
}

// shape lists each attribute as "name type flags", nested attributes
// under their parent's name, sorted.
func shape(s *tfprotov6.Schema) []string {
	var out []string
	var walk func(prefix string, attrs []*tfprotov6.SchemaAttribute)
	walk = func(prefix string, attrs []*tfprotov6.SchemaAttribute) {
		for _, a := range attrs {
			typ := "nested"
			if a.Type != nil {
				typ = a.Type.String()
			}
			out = append(out, fmt.Sprintf("%s%s %s r=%t o=%t c=%t", prefix, a.Name, typ, a.Required, a.Optional, a.Computed))
			if a.NestedType != nil {
				walk(prefix+a.Name+".", a.NestedType.Attributes)
			}
		}
	}
	walk("", s.Block.Attributes)
	sort.Strings(out)
	return out
}

// noop_raw is served beside the framework's types with noop_wide's schema,
// and its create plans every computed attribute unknown and applies them
// known, as a real provider must for OpenTofu to accept the result.
func TestRawPlansUnknownAndAppliesKnown(t *testing.T) {
	srv, err := noopprovider.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	raw := resourceSchema(t, func() (tfprotov6.ProviderServer, error) { return srv, nil }, noopprovider.RawType)
	wide := resourceSchema(t, func() (tfprotov6.ProviderServer, error) { return srv, nil }, "noop_wide")
	if fmt.Sprint(shape(raw)) != fmt.Sprint(shape(wide)) {
		t.Fatalf("noop_raw shape %v, want noop_wide's %v", shape(raw), shape(wide))
	}
	typ := raw.ValueType()
	attrs := map[string]tftypes.Value{}
	for n, at := range typ.(tftypes.Object).AttributeTypes {
		attrs[n] = tftypes.NewValue(at, nil)
	}
	attrs["name"] = tftypes.NewValue(tftypes.String, "a")
	proposed := dynamic(t, typ, tftypes.NewValue(typ, attrs))
	prior := dynamic(t, typ, tftypes.NewValue(typ, nil))
	ctx := context.Background()
	plan, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: noopprovider.RawType, ProposedNewState: &proposed, PriorState: &prior, Config: &proposed})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	planned := members(t, typ, plan.PlannedState)
	if planned["uid"].IsKnown() || !planned["name"].IsKnown() {
		t.Fatalf("planned uid known=%t name known=%t, want unknown uid and known name", planned["uid"].IsKnown(), planned["name"].IsKnown())
	}
	applied, err := srv.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: noopprovider.RawType, PlannedState: plan.PlannedState, PriorState: &prior, Config: &proposed})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatalf("apply: %v %v", err, applied.Diagnostics)
	}
	for n, v := range members(t, typ, applied.NewState) {
		if !v.IsFullyKnown() {
			t.Errorf("applied %s is not known", n)
		}
	}
}

func dynamic(t *testing.T, typ tftypes.Type, v tftypes.Value) tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return dv
}

func members(t *testing.T, typ tftypes.Type, dv *tfprotov6.DynamicValue) map[string]tftypes.Value {
	t.Helper()
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
