package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/internal/hosttest"
)

const bareProvider = `
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {}
`

// TestAccProviderEnvironment: endpoint, space and token come from
// TAKOFORM_ENDPOINT, TAKOFORM_SPACE and TAKOFORM_TOKEN when the provider
// block omits them; the space is used exactly (embedded space kept). A
// missing endpoint and an unknown token end in a rendered diagnostic.
func TestAccProviderEnvironment(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	t.Setenv("TAKOFORM_ENDPOINT", h.URL)
	t.Setenv("TAKOFORM_SPACE", "Prod North")
	t.Setenv("TAKOFORM_TOKEN", hosttest.TokenA1)
	cfg := bareProvider + `resource "takoform_edge_kv_namespace" "cache" { name = "cache" }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg, Check: resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "space", "Prod North")},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})

	t.Setenv("TAKOFORM_TOKEN", "token-of-nobody")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{{Config: cfg, ExpectError: diagRE("Cannot negotiate with the Takoform host",
			"Code: unauthenticated (host, HTTP 401)", "Set a valid host token (provider token or TAKOFORM_TOKEN) and retry.")}},
	})

	t.Setenv("TAKOFORM_ENDPOINT", "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{{Config: cfg, ExpectError: diagRE("Missing host endpoint",
			"Code: takoform.provider/endpoint-missing", "Set endpoint in the provider block or TAKOFORM_ENDPOINT")}},
	})
}
