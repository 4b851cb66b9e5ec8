package provider_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
)

// gizmoCatalog is the built-in Edge family plus the forms.example.com
// Gizmo, a definition that exists nowhere in the Go code
// (testdata/forms/gizmo/definition.json).
func gizmoCatalog(t *testing.T) *form.Catalog {
	t.Helper()
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := host.LoadCatalog(os.DirFS("testdata/forms"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range extra.Forms() {
		if cat, err = cat.AddForm(in.Definition, in.PackageDigest); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

func gizmo(h *hosttest.Host, body string) string {
	return providerBlock(h, "lab") + `
resource "takoform_gizmo" "g" {
  name = "g1"
` + body + `
}
`
}

// TestAccGenericForm drives a Form the provider has never seen —
// installed into the host and into a test registry built from the same
// catalog — through create, plan, in-place update, import (every ID form
// and an import block), replacement on its immutable field, plan-time
// schema refusals, and destroy, with a real OpenTofu.
func TestAccGenericForm(t *testing.T) {
	cat := gizmoCatalog(t)
	h := accHost(t, hosttest.Options{Catalog: cat})
	reg, err := provider.NewRegistry(cat, provider.DeclareCatalog(cat))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Types["takoform_gizmo"]; !ok {
		t.Fatal("the test registry has no takoform_gizmo type")
	}
	const addr = "takoform_gizmo.g"
	create := gizmo(h, `  sprocket_count = 3
  serial_number  = "AB-0001"`)
	update := gizmo(h, `  sprocket_count = 5
  finish         = "gloss"
  labels         = ["round", "blue"]
  serial_number  = "AB-0001"`)
	replace := gizmo(h, `  sprocket_count = 5
  finish         = "gloss"
  labels         = ["round", "blue"]
  serial_number  = "CD-0002"`)
	verify := func(id string) resource.TestStep {
		return resource.TestStep{Config: update, ResourceName: addr, ImportState: true, ImportStateId: id,
			ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid", ImportStateVerifyIgnore: providerSideInputs}
	}
	ref := cat.Versions("forms.example.com/v1alpha1", "Gizmo")[0].Definition.Ref()
	jsonID := fmt.Sprintf(`{"space":"lab","apiVersion":%q,"kind":%q,"definitionVersion":%q,"schemaDigest":%q,"name":"g1"}`,
		ref.APIVersion, ref.Kind, ref.DefinitionVersion, ref.SchemaDigest)
	empty := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(reg),
		Steps: []resource.TestStep{
			{Config: create, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(addr, "finish", "matte"), // the declared default, materialised
				resource.TestCheckNoResourceAttr(addr, "labels"),
				resource.TestCheckResourceAttr(addr, "generation", "1"),
				resource.TestCheckResourceAttr(addr, "space", "lab"),
				resource.TestCheckResourceAttr(addr, "form_api_version", "forms.example.com/v1alpha1"),
				resource.TestCheckResourceAttr(addr, "form_kind", "Gizmo"),
				resource.TestCheckResourceAttr(addr, "form_schema_digest", ref.SchemaDigest),
				resource.TestCheckResourceAttr(addr, "outputs_json", "{}"),
			)},
			{Config: create, ConfigPlanChecks: empty},
			{Config: update, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(addr, "sprocket_count", "5"),
				resource.TestCheckResourceAttr(addr, "finish", "gloss"),
				resource.TestCheckTypeSetElemAttr(addr, "labels.*", "blue"),
				resource.TestCheckResourceAttr(addr, "generation", "2"),
			)},
			verify("g1"),
			verify("lab/g1"),
			verify(jsonID),
			{Config: update, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: jsonID},
			{Config: update, ConfigPlanChecks: empty},
			{Config: replace, ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			}, Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(addr, "serial_number", "CD-0002"),
				resource.TestCheckResourceAttr(addr, "generation", "1"),
			)},
			{Config: gizmo(h, `  sprocket_count = 0
  serial_number  = "CD-0002"`), ExpectError: diagRE("Invalid takoform_gizmo", "Resource: takoform_gizmo (lab/g1)",
				"Form: forms.example.com/v1alpha1 Gizmo 1.0.0", "Pointer: /sprocketCount", "Code: takoform.provider/plan-rule", repairRule)},
			{Config: gizmo(h, `  sprocket_count = 5
  finish         = "chrome"
  serial_number  = "CD-0002"`), ExpectError: diagRE("takoform_gizmo", "Pointer: /finish", "Code: takoform.provider/")},
		},
		CheckDestroy: checkGone(t, h, "lab"),
	})
}
