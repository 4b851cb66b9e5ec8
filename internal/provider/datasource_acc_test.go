package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

const repairNotFound = "Check name and space (the provider's space when the data source sets none), or create the resource first: a data source only reads a resource that exists."

// TestAccDataSourceReadsAManagedResource: a data source reads a resource
// the same configuration manages and reports its uid, FormRef, generation
// and conditions; a plan after apply is empty.
func TestAccDataSourceReadsAManagedResource(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	cfg := providerBlock(h, "reads") + `
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}

data "takoform_edge_kv_namespace" "cache" {
  name = takoform_edge_kv_namespace.cache.name
}
`
	const ds, rs = "data.takoform_edge_kv_namespace.cache", "takoform_edge_kv_namespace.cache"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair(ds, "uid", rs, "uid"),
					resource.TestCheckResourceAttrPair(ds, "form_schema_digest", rs, "form_schema_digest"),
					resource.TestCheckResourceAttr(ds, "space", "reads"),
					resource.TestCheckResourceAttr(ds, "form_kind", "EdgeKVNamespace"),
					resource.TestCheckResourceAttr(ds, "generation", "1"),
					resource.TestCheckResourceAttr(ds, "ready", "true"),
					resource.TestCheckResourceAttr(ds, "conditions.0.type", "Ready"),
					resource.TestCheckResourceAttr(ds, "outputs_json", "{}"),
				),
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// TestAccDataSourceAbsent: reading a name the host does not hold is an
// error naming the type, name, space and the FormRefs tried; following the
// repair (creating the resource) makes the same configuration read it.
func TestAccDataSourceAbsent(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	cfg := providerBlock(h, "absent") + `
data "takoform_edge_kv_namespace" "later" {
  name = "later"
}
`
	kvRef := edgeRef(t, "EdgeKVNamespace")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: diagRE(`No takoform_edge_kv_namespace named "later" in space "absent"`, kvRef.String(),
					"Resource: takoform_edge_kv_namespace (absent/later)", "Code: takoform.provider/data-source-not-found", repairNotFound),
			},
			{
				PreConfig: func() { createKV(t, h, "absent", "later") },
				Config:    cfg,
				Check:     resource.TestCheckResourceAttr("data.takoform_edge_kv_namespace.later", "form_kind", "EdgeKVNamespace"),
			},
		},
	})
}

// TestAccDataSourceAnySupportedRef: with no FormRef configured a data
// source finds the resource under whichever FormRef of the type it is
// bound to (here an earlier definition version, whose state has no
// serial_url), reports that FormRef, and with the four form_* set reads
// under exactly that ref; an incomplete or unsupported FormRef is refused.
func TestAccDataSourceAnySupportedRef(t *testing.T) {
	cat := evolutionCatalog(t)
	v100, v110 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "1.1.0")
	h, _ := evolutionHost(t, cat)
	createOnHost(t, h, "lab", v100, "old", `{"sprocketCount":3,"serialNumber":"AB-0001","finish":"gloss"}`)
	createOnHost(t, h, "lab", v110, "new", `{"sprocketCount":4,"serialNumber":"AB-0002","finish":"gloss"}`)
	pinned := func(name string, ref string) string {
		return fmt.Sprintf(`
data "takoform_gizmo" %[1]q {
  name = %[1]q
  %[2]s
}
`, name, ref)
	}
	refAttrs := func(api, kind, ver, digest string) string {
		return fmt.Sprintf("form_api_version = %q\n  form_kind = %q\n  form_definition_version = %q\n  form_schema_digest = %q", api, kind, ver, digest)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110, v100))),
		Steps: []resource.TestStep{
			{
				Config: providerBlock(h, "lab") + pinned("old", "") + pinned("new", ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.takoform_gizmo.old", "form_definition_version", "1.0.0"),
					resource.TestCheckResourceAttr("data.takoform_gizmo.old", "form_schema_digest", v100.SchemaDigest),
					resource.TestCheckNoResourceAttr("data.takoform_gizmo.old", "serial_url"),
					resource.TestCheckResourceAttr("data.takoform_gizmo.new", "form_definition_version", "1.1.0"),
					resource.TestCheckResourceAttr("data.takoform_gizmo.new", "serial_url", "https://gizmos.example/AB-0002"),
				),
			},
			{
				Config: providerBlock(h, "lab") + pinned("old", refAttrs(v100.APIVersion, v100.Kind, v100.DefinitionVersion, v100.SchemaDigest)),
				Check:  resource.TestCheckResourceAttr("data.takoform_gizmo.old", "form_definition_version", "1.0.0"),
			},
			{
				Config: providerBlock(h, "lab") + pinned("old", refAttrs(v110.APIVersion, v110.Kind, v110.DefinitionVersion, v110.SchemaDigest)),
				ExpectError: diagRE(`No takoform_gizmo named "old" in space "lab"`, v110.String(),
					"Code: takoform.provider/data-source-not-found", repairNotFound),
			},
			{
				Config:      providerBlock(h, "lab") + pinned("old", fmt.Sprintf("form_kind = %q", v100.Kind)),
				ExpectError: diagRE("Invalid FormRef for data source takoform_gizmo", "form_kind set but form_api_version, form_definition_version, form_schema_digest unset", "Code: takoform.provider/invalid-config"),
			},
			{
				Config:      providerBlock(h, "lab") + pinned("old", refAttrs(v100.APIVersion, v100.Kind, "9.9.9", v100.SchemaDigest)),
				ExpectError: diagRE("is not a FormRef takoform_gizmo supports; it supports", v100.String(), v110.String()),
			},
		},
	})
}
