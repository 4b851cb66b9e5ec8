package provider_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/internal/hosttest"
)

// importOrder is one resource of every Edge type in the order a real
// configuration creates them. The auth service's revisions (pinned names)
// stand in for the revision types in import blocks: a person importing a
// revision writes its name.
var importOrder = []string{
	"takoform_module_worker.app",
	"takoform_edge_kv_namespace.cache",
	"takoform_edge_object_bucket.assets",
	"takoform_sqlite_database.db",
	"takoform_at_least_once_queue.jobs",
	"takoform_worker_bundle.app",
	"takoform_worker_bundle.auth",
	"takoform_worker_version.app",
	"takoform_worker_version.auth",
	"takoform_worker_deployment.app",
	"takoform_worker_endpoint.app",
	"takoform_worker_cron_trigger.nightly",
	"takoform_worker_custom_domain.www",
	"takoform_queue_consumer.jobs",
}

// providerSideInputs are the attributes import cannot read back: they
// never reach the host.
var providerSideInputs = []string{"create_timeout", "update_timeout", "delete_timeout", "revision_owner", "main_module", "modules"}

// TestAccEdgeImport imports one resource of each of the 12 Edge types by
// NAME, SPACE/NAME and the JSON identity (tofu import), verifying the
// imported state, and through an import block, whose plan must be a no-op
// import (after import, the plan is empty — Forms without update too, and
// the bundle authored from local modules and the revisions with derived
// names, spec/decisions/0007-orphan-recovery.md rule 3).
func TestAccEdgeImport(t *testing.T) {
	t.Parallel() // the longest CPU-bound case: runs beside the waiting ones
	const space = "Prod North"
	h := accHost(t, hosttest.Options{})
	s := defaultStack(t)
	cfg := providerBlock(h, space) + s.hcl()
	s.authManifest = authManifestDigest(t)
	importCfg := providerBlock(h, space) + s.hcl() // the auth bundle by its committed digest, as an importer writes it
	steps := []resource.TestStep{
		{Config: cfg},
		{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}
	for _, addr := range importOrder {
		for _, form := range []string{"NAME", "SPACE/NAME", "JSON"} {
			steps = append(steps, resource.TestStep{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStateIdFunc: importID(addr, form),
				ImportStateVerify: true, ImportStateVerifyIdentifierAttribute: "uid", ImportStateVerifyIgnore: providerSideInputs,
			})
		}
		blockCfg := cfg
		if addr == "takoform_worker_bundle.auth" {
			blockCfg = importCfg
		}
		steps = append(steps, resource.TestStep{
			Config: blockCfg, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
			ImportStateIdFunc: importID(addr, "JSON"),
		})
	}
	steps = append(steps, resource.TestStep{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}})
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: steps})
}

// importID builds an import ID of one form from the resource's state.
func importID(addr, form string) resource.ImportStateIdFunc {
	return func(st *terraform.State) (string, error) {
		rs, ok := st.RootModule().Resources[addr]
		if !ok {
			return "", fmt.Errorf("%s is not in state", addr)
		}
		a := rs.Primary.Attributes
		switch form {
		case "NAME":
			return a["name"], nil
		case "SPACE/NAME":
			return a["space"] + "/" + a["name"], nil
		}
		b, err := json.Marshal(map[string]string{"space": a["space"], "apiVersion": a["form_api_version"], "kind": a["form_kind"],
			"definitionVersion": a["form_definition_version"], "schemaDigest": a["form_schema_digest"], "name": a["name"]})
		return string(b), err
	}
}
