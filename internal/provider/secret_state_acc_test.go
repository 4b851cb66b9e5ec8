package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccSecretNeverInState: a worker version declaring a sensitive
// variable keeps only its name in OpenTofu state; the value, set out of
// band through the host's secret route (spec/runtime-v1.md §3.2), appears
// in no attribute of any resource after a refresh, and the plan stays
// empty.
func TestAccSecretNeverInState(t *testing.T) {
	h := accHost(t, hosttest.Options{Workerd: enginetest.Binary(t)})
	const value = "s3cr3t-value-never-in-state-7f1c"
	main := writeModule(t, t.TempDir(), "main.js", "export default { async fetch(r, env) { return new Response(String(env.API_TOKEN.length)) } };\n")
	cfg := versionStack(h, "app-bundle", `  main_module = "main.js"
  modules = [{ name = "main.js", content_file = `+main+` }]
`)
	cfg = strings.Replace(cfg, `handlers = ["fetch"]`, `handlers = ["fetch"]
  required_sensitive_vars = ["API_TOKEN"]`, 1)
	noValue := func(s *terraform.State) error {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), value) {
			return fmt.Errorf("the sensitive value is in the state")
		}
		if !strings.Contains(string(b), "API_TOKEN") {
			return fmt.Errorf("the state does not hold the variable's name: the check reads the wrong state")
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg, Check: noValue},
			{
				PreConfig: func() {
					_, err := hostClient(t, h).SetSecret(context.Background(), client.Worker{Space: "prod", Group: edge.Group, Name: "app"}, "API_TOKEN", []byte(value))
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: noValue,
			},
		},
	})
}
