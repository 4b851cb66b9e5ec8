package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccEdgeStack creates the whole worker app, finds a second plan
// empty, checks the endpoint's outputs, and destroys it.
func TestAccEdgeStack(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	s := defaultStack(t)
	s.extra = `
output "url" {
  value = takoform_worker_endpoint.app.url
}
`
	cfg := providerBlock(h, "prod") + s.hcl()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr("takoform_worker_endpoint.app", "hostname", regexp.MustCompile(`^[a-z0-9.-]+$`)),
					resource.TestMatchResourceAttr("takoform_worker_endpoint.app", "url", regexp.MustCompile(`^https://[a-z0-9.-]+/$`)),
					checkReady(t, h, "prod", "ModuleWorker", "app"),
					resource.TestMatchOutput("url", regexp.MustCompile(`^https://[a-z0-9.-]+/$`)),
					resource.TestCheckResourceAttr("takoform_worker_endpoint.app", "ready", "true"),
				),
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
