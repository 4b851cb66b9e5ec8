package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
)

// rolloutConfig is a worker app whose bundle and version are revisions
// with derived names; extra maps a resource type to lines added inside
// its block.
func rolloutConfig(h *hosttest.Host, dir string, extra map[string]string) string {
	return providerBlock(h, "prod") + fmt.Sprintf(`
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules = [
    { name = "worker.js", content_file = %q },
    { name = "lib.js", content_file = %q },
  ]
%s}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch"]
%s}

resource "takoform_worker_deployment" "app" {
  name     = "app"
  worker   = takoform_module_worker.app.name
  versions = [{ worker_version = takoform_worker_version.app.name, weight = 10000 }]
}
`, dir+"/worker.js", dir+"/lib.js", extra["takoform_worker_bundle"], extra["takoform_worker_version"])
}

// followRepair does what a repair sentence tells: it adds the lifecycle
// block the sentence quotes to every takoform_ resource type the sentence
// names. A sentence that quotes no block or names no type fails the test.
func followRepair(t *testing.T, sentence string) map[string]string {
	t.Helper()
	block := regexp.MustCompile(`lifecycle \{[^}]*\}`).FindString(sentence)
	types := regexp.MustCompile(`takoform_[a-z_]+`).FindAllString(sentence, -1)
	if block == "" || len(types) == 0 {
		t.Fatalf("the repair names no lifecycle block or no resource type to add it to: %q", sentence)
	}
	extra := map[string]string{}
	for _, ty := range types {
		extra[ty] = "  " + block + "\n"
	}
	return extra
}

// TestAccRolloutRepairIsFollowed: a configuration whose revisions lack
// create_before_destroy fails a code rollout at the delete of the old
// version (the deployment still weights it); the diagnostic's repair names
// the lifecycle block, and the configuration changed exactly as the repair
// says rolls the new code out: new bundle, new version, the deployment
// repointed, the old revisions gone.
func TestAccRolloutRepairIsFollowed(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	c := hostClient(t, h)
	dir := moduleDir(t, "v1")
	repair := provider.RevisionDeleteRepair
	if !strings.Contains(repair, "lifecycle { create_before_destroy = true }") {
		t.Fatalf("the repair of a revision's refused delete does not name the lifecycle block: %q", repair)
	}
	var oldVersion, oldBundle string
	remember := func(st *terraform.State) error {
		oldVersion = st.RootModule().Resources["takoform_worker_version.app"].Primary.Attributes["name"]
		oldBundle = st.RootModule().Resources["takoform_worker_bundle.app"].Primary.Attributes["name"]
		return nil
	}
	rolledOut := func(st *terraform.State) error {
		attrs := func(a string) map[string]string { return st.RootModule().Resources[a].Primary.Attributes }
		nv := attrs("takoform_worker_version.app")["name"]
		if nv == oldVersion {
			return fmt.Errorf("the version kept its name %s", nv)
		}
		if got := attrs("takoform_worker_deployment.app")["versions.0.worker_version"]; got != nv {
			return fmt.Errorf("the deployment weights %s, not the new version %s", got, nv)
		}
		for kind, name := range map[string]string{"WorkerVersion": oldVersion, "WorkerBundle": oldBundle} {
			_, err := c.Read(context.Background(), client.Address{Space: "prod", Ref: edgeRef(t, kind), Name: name})
			if !client.IsNotFound(err) {
				return fmt.Errorf("the old %s %s is still on the host (read: %v)", kind, name, err)
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: rolloutConfig(h, dir, nil), Check: remember},
			{
				PreConfig: func() { writeModules(t, dir, "v2") },
				Config:    rolloutConfig(h, dir, nil),
				ExpectError: diagRE("Cannot delete takoform_worker_version",
					"still referenced by WorkerDeployment", "Code: dependency_in_use (host, HTTP 409)", repair),
			},
			{
				Config: rolloutConfig(h, dir, followRepair(t, repair)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectResourceAction("takoform_worker_deployment.app", plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(rolledOut,
					checkReady(t, h, "prod", "ModuleWorker", "app")),
			},
		},
	})
}
