package provider_test

import (
	"context"
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

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
)

// publicProvider is the public provider's source address.
const publicProvider = "registry.terraform.io/tako0614/takoform"

// TestAccPublicProviderState: against a host serving the public family,
// our provider creates all 12 types under the public family's FormRefs
// (the host serves only those). The working state is then replaced by the
// committed fixture in the public provider's layout — its source address,
// schema version 1, the attribute set of
// terraform-surface-baseline-v1alpha3.json, the public FormRefs; one
// resource of each type and more — and the switch a user makes is made
// with the real CLI (`tofu state replace-provider
// registry.terraform.io/tako0614/takoform <ours>`).
// From there a refresh plans empty, a rollout and an update apply, every
// type imports by name under the public FormRef, and destroy removes
// everything (decision spec/decisions/0016-equivalent-identities.md).
// It runs under the pinned OpenTofu and, when one is on PATH, Terraform
// (clis): the switch is the same `state replace-provider` there.
func TestAccPublicProviderState(t *testing.T) {
	ref := testref.Dir(t)
	cat, err := host.LoadFamilies(host.FamilySources([]string{ref}, func(d string) fs.FS { return os.DirFS(d) }))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clis(t) {
		t.Run(c.name, func(t *testing.T) {
			// terraform-plugin-testing reads the CLI from the environment;
			// no parallel test runs while a sequential one does
			t.Setenv("TF_ACC_TERRAFORM_PATH", c.path)
			t.Logf("running under %s %s", c.path, c.version)
			publicProviderState(t, ref, cat, c)
		})
	}
}

func publicProviderState(t *testing.T, ref string, cat *form.Catalog, c cliTool) {
	h := accHost(t, hosttest.Options{Catalog: cat})
	fixture := readFile(t, "testdata/state/public-provider-v1.tfstate")
	checkPublicFixture(t, ref, cat, fixture)
	// The configuration is one the public provider accepts: it has no
	// revision_owner, so the app's revisions have pinned names (a new
	// name for the rollout's new revisions).
	pinned := func(hcl string, n int) string {
		hcl = strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  main_module    =", fmt.Sprintf("name        = \"app-bundle-%d\"\n  main_module =", n), 1)
		return strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  worker         =", fmt.Sprintf("name           = \"app-version-%d\"\n  worker         =", n), 1)
	}
	s := defaultStack(t)
	modulesV1 := s.dir
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
	// toPublicLayout replaces the working directory's state with the
	// committed fixture testdata/state/public-provider-v1.tfstate — the
	// public provider's layout, held to its baseline by checkPublicFixture
	// — with only the host-minted values filled in from the host, then
	// switches it to our provider with the CLI, as a user does.
	toPublicLayout := func() {
		dirs, _ := filepath.Glob(filepath.Join(base, "work*"))
		if len(dirs) != 1 {
			t.Fatalf("want one working directory under %s, found %v", base, dirs)
		}
		path := filepath.Join(dirs[0], "terraform.tfstate")
		var written struct {
			Version string `json:"terraform_version"`
		}
		if err := json.Unmarshal(readFile(t, path), &written); err != nil || !strings.HasPrefix(written.Version, fmt.Sprintf("%d.%d.", c.major, c.minor)) {
			t.Fatalf("the state was written by %q (%v), not by the %s under test (%s)", written.Version, err, c.name, c.version)
		}
		if err := os.WriteFile(path, fillPublicFixture(t, h, fixture, modulesV1), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), "state", "replace-provider", "-auto-approve", publicProvider, "registry.opentofu.org/takoform/takoform")
		cmd.Dir = dirs[0]
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s state replace-provider: %v\n%s", cmd.Path, err, b)
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

// fixtureState is the part of a state file the fixture checks read.
type fixtureState struct {
	Resources []struct {
		Type, Name, Provider string
		Instances            []struct {
			SchemaVersion int            `json:"schema_version"`
			Attributes    map[string]any `json:"attributes"`
		}
	}
}

// checkPublicFixture holds the committed fixture to the public provider's
// layout: its source address, for each of the 12 types the schema version
// and exactly the attribute set of terraform-surface-baseline-v1alpha3.json,
// and FormRefs of the public family.
func checkPublicFixture(t *testing.T, ref string, cat *form.Catalog, fixture []byte) {
	t.Helper()
	baseline := map[string]struct {
		Version    int                        `json:"version"`
		Attributes map[string]json.RawMessage `json:"attributes"`
	}{}
	if err := json.Unmarshal(readFile(t, filepath.Join(ref, "terraform-surface-baseline-v1alpha3.json")), &baseline); err != nil {
		t.Fatal(err)
	}
	var st fixtureState
	if err := json.Unmarshal(fixture, &st); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, r := range st.Resources {
		b, ok := baseline[r.Type]
		addr := r.Type + "." + r.Name
		switch {
		case !ok:
			t.Fatalf("%s: the public provider has no such type", addr)
		case r.Provider != `provider["`+publicProvider+`"]`:
			t.Fatalf("%s is held by %s, not the public provider", addr, r.Provider)
		case len(r.Instances) != 1 || r.Instances[0].SchemaVersion != b.Version:
			t.Fatalf("%s is not one instance at the public schema version %d", addr, b.Version)
		}
		a := r.Instances[0].Attributes
		for k := range b.Attributes {
			if _, ok := a[k]; !ok && !strings.Contains(k, ".") {
				t.Fatalf("%s lacks the public attribute %s", addr, k)
			}
		}
		for k := range a {
			if _, ok := b.Attributes[k]; !ok {
				t.Fatalf("%s carries %s, which the public provider does not have", addr, k)
			}
		}
		fr := form.FormRef{APIVersion: str(a["form_api_version"]), Kind: str(a["form_kind"]), DefinitionVersion: str(a["form_definition_version"]), SchemaDigest: str(a["form_schema_digest"])}
		if _, ok := cat.Form(fr); !ok {
			t.Fatalf("%s is recorded under %s, not a FormRef of the public family", addr, fr)
		}
		types[r.Type] = true
	}
	if len(types) != 12 {
		t.Fatalf("the fixture holds %d types, want 12", len(types))
	}
}

func str(v any) string { s, _ := v.(string); return s }

// fillPublicFixture fills the fixture's host-minted values from the host:
// each resource's uid (read under its recorded FormRef and name), the
// endpoint's hostname, and the directory of the module files.
func fillPublicFixture(t *testing.T, h *hosttest.Host, fixture []byte, modules string) []byte {
	t.Helper()
	var st fixtureState
	if err := json.Unmarshal(fixture, &st); err != nil {
		t.Fatal(err)
	}
	c := hostClient(t, h)
	pairs := []string{"{{modules_dir}}", modules}
	for _, r := range st.Resources {
		a := r.Instances[0].Attributes
		fr := form.FormRef{APIVersion: str(a["form_api_version"]), Kind: str(a["form_kind"]), DefinitionVersion: str(a["form_definition_version"]), SchemaDigest: str(a["form_schema_digest"])}
		res, err := c.Read(context.Background(), client.Address{Space: str(a["space"]), Ref: fr, Name: str(a["name"])})
		if err != nil {
			t.Fatalf("%s.%s: %v", r.Type, r.Name, err)
		}
		pairs = append(pairs, "{{uid "+r.Type+"."+r.Name+"}}", res.Metadata.UID)
		if r.Type == "takoform_worker_endpoint" {
			var out struct{ Hostname string }
			if err := json.Unmarshal(res.Status.Outputs, &out); err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, "{{endpoint_hostname}}", out.Hostname)
		}
	}
	filled := strings.NewReplacer(pairs...).Replace(string(fixture))
	if strings.Contains(filled, "{{") {
		t.Fatalf("the fixture keeps a placeholder after filling: %s", filled[strings.Index(filled, "{{"):][:40])
	}
	return []byte(filled)
}
