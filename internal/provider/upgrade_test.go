package provider_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/surface"
)

// The guide's pattern (seed terraform-sdk-state-migration,
// TestResourceExampleInstanceStateUpgradeV0): each layout step is tested
// as a pure function, old data in, new data out.

func testEdgeStateDataV0() map[string]any {
	return map[string]any{"name": "cache", "space": "prod", "uid": "u-1", "generation": "1", "create_timeout": nil}
}

func testEdgeStateDataV1() map[string]any {
	v0 := testEdgeStateDataV0()
	return map[string]any{"name": v0["name"], "space": v0["space"], "uid": v0["uid"], "generation": v0["generation"], "create_timeout": nil}
}

// TestEdgeStateUpgradeV0: the shipped step 0 → 1 carries the value whole.
func TestEdgeStateUpgradeV0(t *testing.T) {
	expected := testEdgeStateDataV1()
	actual, err := provider.CarryV0(testEdgeStateDataV0())
	if err != nil {
		t.Fatalf("error migrating state: %s", err)
	}
	if !reflect.DeepEqual(expected, actual) {
		t.Fatalf("\n\nexpected:\n\n%#v\n\ngot:\n\n%#v\n\n", expected, actual)
	}
}

// gizmoStepV1 is the test-only layout step 1 → 2 of takoform_gizmo: it
// reads its own frozen layout (testdata/layouts/v1.json), where the finish
// was stored under surface_finish, and renames it to finish.
func gizmoStepV1(old map[string]any) (map[string]any, error) {
	old["finish"] = old["surface_finish"]
	delete(old, "surface_finish")
	return old, nil
}

func testGizmoStateDataV1() map[string]any {
	return map[string]any{"name": "g0", "surface_finish": "gloss", "labels": nil, "pending_operation_id": nil}
}

func testGizmoStateDataV2() map[string]any {
	v1 := testGizmoStateDataV1()
	return map[string]any{"name": v1["name"], "finish": v1["surface_finish"], "labels": nil, "pending_operation_id": nil}
}

func TestGizmoStateUpgradeV1(t *testing.T) {
	expected := testGizmoStateDataV2()
	actual, err := gizmoStepV1(testGizmoStateDataV1())
	if err != nil {
		t.Fatalf("error migrating state: %s", err)
	}
	if !reflect.DeepEqual(expected, actual) {
		t.Fatalf("\n\nexpected:\n\n%#v\n\ngot:\n\n%#v\n\n", expected, actual)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gizmoLineage is the test-only layout history of takoform_gizmo: layout
// 2 is live; layouts 0 and 1 are frozen test data.
func gizmoLineage(t *testing.T) *provider.Lineage {
	return &provider.Lineage{
		Version: 2,
		Frozen:  map[int64][]byte{0: readFile(t, "testdata/layouts/v0.json"), 1: readFile(t, "testdata/layouts/v1.json")},
		Steps:   []provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}, {From: 1, Upgrade: gizmoStepV1}},
	}
}

// gizmoLayoutRegistry is the generic-Form test build with takoform_gizmo
// at layout 2.
func gizmoLayoutRegistry(t *testing.T) *provider.Registry {
	cat := gizmoCatalog(t)
	decls := provider.DeclareCatalog(cat)
	for i := range decls {
		if decls[i].Name == "takoform_gizmo" {
			decls[i].Lineage = gizmoLineage(t)
		}
	}
	reg, err := provider.NewRegistry(cat, decls)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func liveType(t *testing.T, reg *provider.Registry, name string) tftypes.Object {
	t.Helper()
	typ := reg.Types[name].Schema.Type().TerraformType(context.Background())
	o, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s: the schema's type is %s, not an object", name, typ)
	}
	return o
}

// TestLineageUpgradesStraightToCurrent: state of layout 0 goes 0→1→2 and
// state of layout 1 goes 1→2, both to the live layout in one call; null
// and absent prior values are carried as null.
func TestLineageUpgradesStraightToCurrent(t *testing.T) {
	reg := gizmoLayoutRegistry(t)
	l, cur := reg.Types["takoform_gizmo"].Lineage, liveType(t, reg, "takoform_gizmo")
	v0 := map[string]any{"name": "g0", "space": "prod", "surface_finish": "gloss", "sprocket_count": big.NewFloat(3), "labels": nil} // the rest absent
	want := map[string]any{"name": "g0", "space": "prod", "finish": "gloss", "sprocket_count": big.NewFloat(3), "labels": nil}
	for from, old := range map[int64]map[string]any{0: v0, 1: v0} {
		got, err := l.Upgrade("takoform_gizmo", from, old, cur)
		if err != nil {
			t.Fatalf("from %d: %v", from, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("from %d:\n got %#v\nwant %#v", from, got, want)
		}
	}
	if _, err := l.Upgrade("takoform_gizmo", 2, v0, cur); err == nil {
		t.Error("an upgrade from the current version was accepted")
	}
}

// TestLineageRejectsBadSteps: a step whose output holds an unknown value,
// keeps an attribute the next layout lacks (a missing rename, an
// intermediate shape), or carries a value of the wrong type is refused,
// naming the step.
func TestLineageRejectsBadSteps(t *testing.T) {
	reg := gizmoLayoutRegistry(t)
	cur := liveType(t, reg, "takoform_gizmo")
	frozen := reg.Types["takoform_gizmo"].Lineage.Frozen
	old := map[string]any{"name": "g0", "surface_finish": "gloss"}
	for name, tc := range map[string]struct {
		steps []provider.LayoutStep
		want  string
	}{
		"unknown": {[]provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}, {From: 1, Upgrade: func(m map[string]any) (map[string]any, error) {
			m, _ = gizmoStepV1(m)
			m["uid"] = provider.Unknown
			return m, nil
		}}}, "layout step 1 → 2 of takoform_gizmo: attribute uid is unknown"},
		"rename missing":     {[]provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}, {From: 1, Upgrade: provider.CarryV0}}, "layout step 1 → 2 of takoform_gizmo: the value has attributes [surface_finish] that the target layout lacks"},
		"intermediate shape": {[]provider.LayoutStep{{From: 0, Upgrade: gizmoStepV1}, {From: 1, Upgrade: provider.CarryV0}}, "layout step 0 → 1 of takoform_gizmo: the value has attributes [finish] that the target layout lacks"},
		"wrong type": {[]provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}, {From: 1, Upgrade: func(m map[string]any) (map[string]any, error) {
			m, _ = gizmoStepV1(m)
			m["finish"] = true
			return m, nil
		}}}, "finish: string value of Go type bool"},
	} {
		l := &provider.Lineage{Version: 2, Frozen: frozen, Steps: tc.steps}
		_, err := l.Upgrade("takoform_gizmo", 0, old, cur)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
}

// TestSchemaVersionNeverGoesDown: a lineage with a frozen layout at or
// above its version, or without one step per earlier version, is refused
// by NewRegistry; every live type's version equals its lineage's and holds
// the committed floor; a build whose version went down is a
// SCHEMA_VERSION_DECREASED finding for every type.
func TestSchemaVersionNeverGoesDown(t *testing.T) {
	cat := gizmoCatalog(t)
	for name, l := range map[string]*provider.Lineage{
		"frozen at the version": {Version: 1, Frozen: map[int64][]byte{0: []byte(`{}`), 1: []byte(`{}`)}, Steps: []provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}}},
		"frozen above":          {Version: 0, Frozen: map[int64][]byte{0: []byte(`{}`)}},
		"step missing":          {Version: 2, Frozen: map[int64][]byte{0: []byte(`{}`)}, Steps: []provider.LayoutStep{{From: 0, Upgrade: provider.CarryV0}}},
	} {
		decls := provider.DeclareCatalog(cat)
		decls[0].Lineage = l
		if _, err := provider.NewRegistry(cat, decls); err == nil {
			t.Errorf("%s: NewRegistry accepted the lineage", name)
		}
	}
	reg := edgeRegistry(t)
	base := committedBaseline(t)
	for name, ts := range reg.Types {
		if ts.Schema.Version != ts.Lineage.Version || ts.Schema.Version < base.Types[name].Version {
			t.Errorf("%s: schema version %d, lineage %d, floor %d", name, ts.Schema.Version, ts.Lineage.Version, base.Types[name].Version)
		}
	}
	var decls []provider.TypeDecl
	for name, ts := range reg.Types {
		decls = append(decls, provider.TypeDecl{Name: name, DefaultCreate: ts.DefaultCreate, Supported: []form.FormRef{ts.DefaultCreate}, Lineage: &provider.Lineage{Version: 0}})
	}
	down, err := provider.NewRegistry(reg.Catalog, decls)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range surface.Check(base, liveSurface(t, down)) {
		if f.Rule == surface.VersionDecreased.ID {
			n++
		}
	}
	if n != len(reg.Types) {
		t.Errorf("%d SCHEMA_VERSION_DECREASED findings for %d types", n, len(reg.Types))
	}
}

// upgradeRPC asks the provider server, as OpenTofu does, to upgrade raw
// state JSON written at version.
func upgradeRPC(t *testing.T, reg *provider.Registry, typeName string, version int64, raw string) (map[string]tftypes.Value, []*tfprotov6.Diagnostic) {
	t.Helper()
	srv, err := provider.NewServer("test", reg)()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, Version: version, RawState: &tfprotov6.RawState{JSON: []byte(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.UpgradedState == nil {
		return nil, resp.Diagnostics
	}
	v, err := resp.UpgradedState.Unmarshal(liveType(t, reg, typeName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		t.Fatal(err)
	}
	return m, resp.Diagnostics
}

// TestUpgradeThroughTheFramework drives the registered upgraders through
// the plugin framework's UpgradeResourceState: the Edge type from version
// 0, takoform_gizmo from 0 and from 1 (each straight to layout 2), with
// null and absent values; a version above the current one is refused.
func TestUpgradeThroughTheFramework(t *testing.T) {
	reg := gizmoLayoutRegistry(t)
	for _, tc := range []struct {
		typ     string
		version int64
		raw     string
		want    map[string]string
	}{
		{"takoform_edge_kv_namespace", 0, `{"name":"cache","space":"prod","uid":"u-1","create_timeout":null}`, map[string]string{"name": "cache", "uid": "u-1"}},
		{"takoform_gizmo", 0, `{"name":"g0","surface_finish":"gloss","labels":null}`, map[string]string{"name": "g0", "finish": "gloss"}},
		{"takoform_gizmo", 1, `{"name":"g0","surface_finish":"satin","pending_operation_id":null}`, map[string]string{"name": "g0", "finish": "satin"}},
		{"takoform_gizmo", 2, `{"name":"g0","finish":"matte"}`, map[string]string{"name": "g0", "finish": "matte"}},
	} {
		got, diags := upgradeRPC(t, reg, tc.typ, tc.version, tc.raw)
		if len(diags) > 0 {
			t.Errorf("%s from %d: %s: %s", tc.typ, tc.version, diags[0].Summary, diags[0].Detail)
			continue
		}
		for k, want := range tc.want {
			var s string
			if err := got[k].As(&s); err != nil || s != want {
				t.Errorf("%s from %d: %s = %v, want %q", tc.typ, tc.version, k, got[k], want)
			}
		}
		if !got["create_timeout"].IsNull() || !got["pending_operation_id"].IsNull() {
			t.Errorf("%s from %d: null and absent values did not stay null", tc.typ, tc.version)
		}
	}
	if _, diags := upgradeRPC(t, reg, "takoform_gizmo", 3, `{"name":"g0"}`); len(diags) == 0 {
		t.Error("state written at a version above the current one was upgraded")
	}
}

// TestEveryEdgeTypeUpgradesFromV0: no Edge type lacks the version-0
// upgrader (a missing upgrader for an old version is a known ecosystem
// failure): each has a frozen layout 0 and state written at version 0,
// every layout-0 attribute present and null, upgrades through the
// framework. The three v1beta1-only types were first released at layout
// 1 (spec/lane-v1beta1.md §13.1: public provider 2.1.1 writes them at
// version 1): they have no layout 0, so no upgrader from it.
func TestEveryEdgeTypeUpgradesFromV0(t *testing.T) {
	reg := edgeRegistry(t)
	firstAt1 := map[string]bool{}
	for _, k := range provider.V1beta1OnlyKinds {
		firstAt1[provider.TypeName(k)] = true
	}
	for name, ts := range reg.Types {
		layout, ok, err := ts.Lineage.Layout(name, 0)
		if firstAt1[name] {
			if ok || err != nil {
				t.Errorf("%s was never released at version 0 but has a frozen layout 0 (%v)", name, err)
			}
			continue
		}
		if err != nil || !ok {
			t.Errorf("%s has no frozen layout 0 (%v)", name, err)
			continue
		}
		raw := map[string]any{}
		for a := range layout.AttributeTypes {
			raw[a] = nil
		}
		raw["name"] = "x"
		b, _ := json.Marshal(raw)
		if got, diags := upgradeRPC(t, reg, name, 0, string(b)); len(diags) > 0 || got == nil {
			t.Errorf("%s from version 0: %v", name, diags)
		}
	}
}
