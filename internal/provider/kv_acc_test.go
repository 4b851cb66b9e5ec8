package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

func TestAccEdgeKVNamespace(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	cfg := providerBlock(h, "Prod North") + `
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "space", "Prod North"),
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "generation", "1"),
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "ready", "true"),
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "outputs_json", "{}"),
					resource.TestCheckResourceAttrSet("takoform_edge_kv_namespace.cache", "uid"),
				),
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{Config: cfg, ResourceName: "takoform_edge_kv_namespace.cache", ImportState: true, ImportStateId: "cache", ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid"},
			{Config: cfg, ResourceName: "takoform_edge_kv_namespace.cache", ImportState: true, ImportStateId: "Prod North/cache", ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid"},
		},
	})
}
