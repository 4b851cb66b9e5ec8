package provider_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
)

// publicProvider is the public provider's source address.
const publicProvider = "registry.terraform.io/tako0614/takoform"

// TestAccPublicProviderState: against a host serving the public family,
// our provider creates all 12 types under the public family's FormRefs
// (the host serves only those). The state is then rewritten into the
// public provider's layout — its source address, schema version 1, the
// attribute set of terraform-surface-baseline-v1alpha3.json — and the
// switch a user makes is made with the real CLI (`tofu state
// replace-provider registry.terraform.io/tako0614/takoform <ours>`).
// From there a refresh plans empty, a rollout and an update apply, every
// type imports by name under the public FormRef, and destroy removes
// everything (decision spec/decisions/0016-equivalent-identities.md).
func TestAccPublicProviderState(t *testing.T) {
	ref := testref.Dir(t)
	cat, err := host.LoadFamilies(host.FamilySources([]string{ref}, func(d string) fs.FS { return os.DirFS(d) }))
	if err != nil {
		t.Fatal(err)
	}
	h := accHost(t, hosttest.Options{Catalog: cat})
	baseline := map[string]struct {
		Version    int                        `json:"version"`
		Attributes map[string]json.RawMessage `json:"attributes"`
	}{}
	if err := json.Unmarshal(readFile(t, filepath.Join(ref, "terraform-surface-baseline-v1alpha3.json")), &baseline); err != nil {
		t.Fatal(err)
	}
	// The configuration is one the public provider accepts: it has no
	// revision_owner, so the app's revisions have pinned names (a new
	// name for the rollout's new revisions).
	pinned := func(hcl string, n int) string {
		hcl = strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  main_module    =", fmt.Sprintf("name        = \"app-bundle-%d\"\n  main_module =", n), 1)
		return strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  worker         =", fmt.Sprintf("name           = \"app-version-%d\"\n  worker         =", n), 1)
	}
	s := defaultStack(t)
	cfg := providerBlock(h, "prod") + pinned(s.hcl(), 1)
	dir2 := t.TempDir()
	writeModules(t, dir2, "v2")
	s.dir, s.retention = dir2, 7200
	cfg2 := providerBlock(h, "prod") + pinned(s.hcl(), 2)
	if strings.Contains(cfg+cfg2, "revision_owner") {
		t.Fatal("the configuration still sets revision_owner, which the public provider does not have")
	}
	base := t.TempDir()

	underPublicRefs := func(st *terraform.State) error {
		types := map[string]bool{}
		for addr, rs := range st.RootModule().Resources {
			a := rs.Primary.Attributes
			r := form.FormRef{APIVersion: a["form_api_version"], Kind: a["form_kind"], DefinitionVersion: a["form_definition_version"], SchemaDigest: a["form_schema_digest"]}
			if _, ok := cat.Form(r); !ok {
				return fmt.Errorf("%s is recorded under %s, which the public family does not define", addr, r)
			}
			types[rs.Type] = true
		}
		if len(types) != 12 {
			return fmt.Errorf("%d types in state, want 12", len(types))
		}
		return nil
	}
	// toPublicLayout rewrites the working directory's state as the public
	// provider writes it, then switches it to our provider with the CLI.
	toPublicLayout := func() {
		dirs, _ := filepath.Glob(filepath.Join(base, "work*"))
		if len(dirs) != 1 {
			t.Fatalf("want one working directory under %s, found %v", base, dirs)
		}
		path := filepath.Join(dirs[0], "terraform.tfstate")
		var st map[string]any
		if err := json.Unmarshal(readFile(t, path), &st); err != nil {
			t.Fatal(err)
		}
		for _, r := range st["resources"].([]any) {
			r := r.(map[string]any)
			b, ok := baseline[r["type"].(string)]
			if !ok {
				t.Fatalf("the public provider has no type %s", r["type"])
			}
			r["provider"] = `provider["` + publicProvider + `"]`
			for _, in := range r["instances"].([]any) {
				in := in.(map[string]any)
				in["schema_version"] = b.Version
				attrs := in["attributes"].(map[string]any)
				for k := range attrs {
					if _, ok := b.Attributes[k]; !ok {
						delete(attrs, k) // ours only (revision_owner): the public provider never wrote it
					}
				}
				delete(in, "identity")
				delete(in, "identity_schema_version")
			}
		}
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), "state", "replace-provider", "-auto-approve", publicProvider, "registry.opentofu.org/takoform/takoform")
		cmd.Dir = dirs[0]
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tofu state replace-provider: %v\n%s", err, b)
		}
		var after struct {
			Resources []struct {
				Type, Provider string
			}
		}
		if err := json.Unmarshal(readFile(t, path), &after); err != nil {
			t.Fatal(err)
		}
		types := map[string]bool{}
		for _, r := range after.Resources {
			if r.Provider != `provider["registry.opentofu.org/takoform/takoform"]` {
				t.Fatalf("after replace-provider %s is still held by %s", r.Type, r.Provider)
			}
			types[r.Type] = true
		}
		if len(types) != 12 {
			t.Fatalf("%d types in the switched state, want 12", len(types))
		}
	}
	steps := []resource.TestStep{
		{Config: cfg, Check: underPublicRefs},
		{PreConfig: toPublicLayout, Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		{Config: cfg2, Check: resource.ComposeAggregateTestCheckFunc(underPublicRefs,
			resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "7200"))},
		{Config: cfg2, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}
	for _, addr := range importOrder {
		steps = append(steps, resource.TestStep{Config: cfg2, ResourceName: addr, ImportState: true, ImportStateVerify: true,
			ImportStateIdFunc: importID(addr, "NAME"), ImportStateVerifyIdentifierAttribute: "uid", ImportStateVerifyIgnore: providerSideInputs})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		WorkingDir:               base,
		Steps:                    steps,
		CheckDestroy:             checkGone(t, h, "prod"),
	})
}
