package provider_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/surface"
)

// TestBreakingDefinitionNeedsAV2Type holds Gizmo builds to a floor taken
// from the original build (takoform_gizmo creating under 1.0.0), with the
// surface package (decision 0030; repo decision 0004). Serving the breaking 2.0.0 as
// takoform_gizmo itself removes finish and makes labels required: exactly
// those findings, each naming takoform_gizmo_v2 as the type to mint. The
// additive 1.1.0 as takoform_gizmo's default create, and 2.0.0 minted as
// takoform_gizmo_v2 beside the original, both pass.
func TestBreakingDefinitionNeedsAV2Type(t *testing.T) {
	cat := evolutionCatalog(t)
	v100, v110, v200 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "1.1.0"), gizmoRef(t, cat, "2.0.0")
	baseline := liveSurface(t, gizmoBuild(t, cat, gizmoType("takoform_gizmo", v100)))
	var got []string
	for _, f := range surface.Check(baseline, liveSurface(t, gizmoBuild(t, cat, gizmoType("takoform_gizmo", v200)))) {
		got = append(got, f.Rule+" "+f.Type+"."+f.Attribute)
		if !strings.Contains(f.String(), "mint takoform_gizmo_v2") {
			t.Errorf("the finding does not name the _v2 to mint: %s", f)
		}
	}
	sort.Strings(got)
	want := []string{"ATTRIBUTE_REMOVED takoform_gizmo.finish", "BECAME_REQUIRED takoform_gizmo.labels"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("serving 2.0.0 as takoform_gizmo: findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for name, build := range map[string]*provider.Registry{
		"1.1.0 as takoform_gizmo's default create": gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110, v100)),
		"2.0.0 as takoform_gizmo_v2 beside 1.0.0":  gizmoBuild(t, cat, gizmoType("takoform_gizmo", v100), gizmoType("takoform_gizmo_v2", v200)),
	} {
		for _, f := range surface.Check(baseline, liveSurface(t, build)) {
			t.Errorf("%s: %s", name, f)
		}
	}
}

// TestAccV2Coexistence: a build registers takoform_gizmo (1.0.0) and
// takoform_gizmo_v2 (the breaking 2.0.0 of the same kind), so default
// create refs are per type. One configuration holds both; each is created,
// refreshed, updated, imported (JSON ID and identity) and deleted under
// its own ref through its own codec. The 2.0.0 identity imported into
// takoform_gizmo is refused naming the refs that type supports, without
// asking the host anything.
func TestAccV2Coexistence(t *testing.T) {
	cat := evolutionCatalog(t)
	h, log := evolutionHost(t, cat)
	v100, v200 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "2.0.0")
	build := factories(gizmoBuild(t, cat, gizmoType("takoform_gizmo", v100), gizmoType("takoform_gizmo_v2", v200)))
	both := func(labels string) string {
		return providerBlock(h, "lab") + `
resource "takoform_gizmo" "a" {
  name           = "g-one"
  sprocket_count = 2
  serial_number  = "AB-0001"
  finish         = "satin"
}

resource "takoform_gizmo_v2" "b" {
  name           = "g-two"
  sprocket_count = 4
  serial_number  = "CD-0002"
  labels         = ` + labels + `
}
`
	}
	cfg, cfg2 := both(`["new"]`), both(`["new", "shiny"]`)
	importAs := func(addr, id string) resource.TestStep {
		return resource.TestStep{Config: cfg, ResourceName: addr, ImportState: true, ImportStateId: id,
			ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid", ImportStateVerifyIgnore: providerSideInputs}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: build,
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_gizmo.a", "form_definition_version", "1.0.0"),
				resource.TestCheckResourceAttr("takoform_gizmo.a", "finish", "satin"),
				resource.TestCheckResourceAttr("takoform_gizmo_v2.b", "form_definition_version", "2.0.0"),
				resource.TestCheckResourceAttr("takoform_gizmo_v2.b", "form_schema_digest", v200.SchemaDigest),
				resource.TestCheckResourceAttr("takoform_gizmo_v2.b", "labels.#", "1"),
			)},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			importAs("takoform_gizmo.a", jsonImportID("lab", v100, "g-one")),
			importAs("takoform_gizmo_v2.b", jsonImportID("lab", v200, "g-two")),
			{Config: cfg, ResourceName: "takoform_gizmo_v2.b", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity},
			{Config: cfg, ResourceName: "takoform_gizmo.a", ImportState: true, ImportStateId: jsonImportID("lab", v200, "g-two"),
				ExpectError: diagRE("This provider build has no codec for the FormRef to import",
					"asked for forms.example.com/v1alpha1 Gizmo 2.0.0 "+v200.SchemaDigest+"; takoform_gizmo supports forms.example.com/v1alpha1 Gizmo 1.0.0 "+v100.SchemaDigest,
					"Code: takoform.provider/unknown-form-ref")},
			{Config: cfg2, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("takoform_gizmo_v2.b", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("takoform_gizmo.a", plancheck.ResourceActionNoop),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_gizmo_v2.b", "generation", "2"),
				resource.TestCheckResourceAttr("takoform_gizmo_v2.b", "form_definition_version", "2.0.0"),
				resource.TestCheckTypeSetElemAttr("takoform_gizmo_v2.b", "labels.*", "shiny"),
			)},
		},
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(checkGone(t, h, "lab"), refsOnly(log, "g-one", "1.0.0"), refsOnly(log, "g-two", "2.0.0")),
	})
}
