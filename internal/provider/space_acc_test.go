package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccProviderSpaceMovesResources: a resource that sets no space lives
// in the provider's space; changing the provider's space replaces it into
// the new one (as changing its own space does), never leaving one
// configuration split across two spaces silently.
func TestAccProviderSpaceMovesResources(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	res := `
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: providerBlock(h, "staging") + res,
				Check: resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "space", "staging")},
			{Config: providerBlock(h, "prod") + res,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("takoform_edge_kv_namespace.cache", plancheck.ResourceActionReplace)}},
				Check: resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "space", "prod")},
			{Config: providerBlock(h, "prod") + res,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
