package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// TestAccFormLineMoves is the behavioural half of seed 0030, through ONE
// resource type and a real OpenTofu. The Gizmo line moved additively from
// 1.0.0 (the OLD definition) to the synthetic 1.1.0 (an optional coating
// and a declared output serialUrl 1.0.0 lacks); both are installed on the
// host. An earlier build (takoform_gizmo creating under 1.0.0) writes
// state; the current build (DefaultCreate 1.1.0, Supported 1.0.0 and
// 1.1.0) then:
//   - creates a NEW resource under 1.1.0 while the OLD state is refreshed
//     under 1.0.0 with an empty plan (1.1.0's codec would refuse the old
//     answer, which lacks serialUrl);
//   - imports each by its exact FormRef (JSON import ID) and by identity;
//   - reads for each the outputs ITS definition published;
//   - updates the old one in place under 1.0.0, and refuses coating on it;
//   - deletes both, each under its own ref.
//
// A build without the 1.0.0 codec fails closed on the old state, naming
// the recorded ref and every ref it knows, and never asks the host about
// g-old under another ref (the refLog sees only 1.0.0 for g-old).
func TestAccFormLineMoves(t *testing.T) {
	cat := evolutionCatalog(t)
	h, log := evolutionHost(t, cat)
	v100, v110 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "1.1.0")
	earlier := factories(gizmoBuild(t, cat, gizmoType("takoform_gizmo", v100)))
	current := factories(gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110, v100)))
	narrow := factories(gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110)))

	old := func(count int, extra string) string {
		return fmt.Sprintf(`
resource "takoform_gizmo" "old" {
  name           = "g-old"
  sprocket_count = %d
  serial_number  = "AB-0001"
%s}
`, count, extra)
	}
	const fresh = `
resource "takoform_gizmo" "new" {
  name           = "g-new"
  sprocket_count = 5
  serial_number  = "CD-0002"
  coating        = "wax"
}
`
	cfg1 := providerBlock(h, "lab") + old(3, "")
	cfg2 := cfg1 + fresh
	cfg3 := providerBlock(h, "lab") + old(4, "") + fresh
	empty := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	importAs := func(addr, id string) resource.TestStep {
		return resource.TestStep{ProtoV6ProviderFactories: current, Config: cfg2, ResourceName: addr, ImportState: true, ImportStateId: id,
			ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid", ImportStateVerifyIgnore: providerSideInputs}
	}
	resource.Test(t, resource.TestCase{
		Steps: []resource.TestStep{
			{ProtoV6ProviderFactories: earlier, Config: cfg1, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_gizmo.old", "form_definition_version", "1.0.0"),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "outputs_json", "{}"),
			)},
			{ProtoV6ProviderFactories: current, Config: cfg2, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("takoform_gizmo.old", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("takoform_gizmo.new", plancheck.ResourceActionCreate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_gizmo.new", "form_definition_version", "1.1.0"),
				resource.TestCheckResourceAttr("takoform_gizmo.new", "form_schema_digest", v110.SchemaDigest),
				resource.TestCheckResourceAttr("takoform_gizmo.new", "coating", "wax"),
				resource.TestCheckResourceAttr("takoform_gizmo.new", "serial_url", "https://gizmos.example/CD-0002"),
				resource.TestCheckResourceAttr("takoform_gizmo.new", "outputs_json", `{"serialUrl":"https://gizmos.example/CD-0002"}`),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "form_definition_version", "1.0.0"),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "form_schema_digest", v100.SchemaDigest),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "outputs_json", "{}"),
				resource.TestCheckNoResourceAttr("takoform_gizmo.old", "serial_url"),
				resource.TestCheckNoResourceAttr("takoform_gizmo.old", "coating"),
			)},
			{ProtoV6ProviderFactories: current, Config: cfg2, ConfigPlanChecks: empty},
			importAs("takoform_gizmo.old", jsonImportID("lab", v100, "g-old")),
			importAs("takoform_gizmo.new", jsonImportID("lab", v110, "g-new")),
			{ProtoV6ProviderFactories: current, Config: cfg2, ResourceName: "takoform_gizmo.old", ImportState: true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity},
			{ProtoV6ProviderFactories: current, Config: providerBlock(h, "lab") + old(3, "  coating = \"wax\"\n") + fresh,
				ExpectError: diagRE("The FormRef this resource is bound to has no member for coating", "bound to forms.example.com/v1alpha1 Gizmo 1.0.0",
					"new resources of takoform_gizmo are created under forms.example.com/v1alpha1 Gizmo 1.1.0", "Code: takoform.provider/ref-lacks-attribute")},
			{ProtoV6ProviderFactories: current, Config: cfg3, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("takoform_gizmo.old", plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("takoform_gizmo.old", "generation", "2"),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "sprocket_count", "4"),
				resource.TestCheckResourceAttr("takoform_gizmo.old", "form_definition_version", "1.0.0"),
			)},
			{ProtoV6ProviderFactories: narrow, Config: cfg3, ExpectError: diagRE(
				"State is bound to a FormRef this provider build does not support",
				"recorded forms.example.com/v1alpha1 Gizmo 1.0.0 "+v100.SchemaDigest+"; this build knows forms.example.com/v1alpha1 Gizmo 1.1.0 "+v110.SchemaDigest,
				"Resource: takoform_gizmo (lab/g-old)", "Code: takoform.provider/unknown-form-ref")},
			{ProtoV6ProviderFactories: current, Config: cfg3, ConfigPlanChecks: empty,
				Check: resource.ComposeAggregateTestCheckFunc(refsOnly(log, "g-old", "1.0.0"), refsOnly(log, "g-new", "1.1.0"))},
		},
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(checkGone(t, h, "lab"), refsOnly(log, "g-old", "1.0.0"), refsOnly(log, "g-new", "1.1.0")),
	})
}
