package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccDataSourceInvalidName: a data source's name outside the
// metadata.name grammar (spec/host-api-v1alpha3.md §1.2) is refused as
// resources refuse it, invalid-config naming the name and the rule, not
// as an internal error; following the repair (a valid name) reads.
func TestAccDataSourceInvalidName(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	cfg := func(name string) string {
		return providerBlock(h, "names") + `
data "takoform_edge_kv_namespace" "y" {
  name = "` + name + `"
}
`
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: cfg("Quick_Start"),
				ExpectError: diagRE("Invalid name", `name "Quick_Start" is invalid; want 1-63 characters: a lowercase letter, then lowercase letters, digits or hyphens`,
					"Code: takoform.provider/invalid-config", "Correct the attribute the message names."),
			},
			{
				PreConfig: func() { createKV(t, h, "names", "quick-start") },
				Config:    cfg("quick-start"),
				Check:     resource.TestCheckResourceAttr("data.takoform_edge_kv_namespace.y", "form_kind", "EdgeKVNamespace"),
			},
		},
	})
}
