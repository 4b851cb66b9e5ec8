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
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// publicProvider is the public provider's source address.
const publicProvider = "registry.terraform.io/tako0614/takoform"

// TestAccPublicProviderState: one host serves both public families
// (public v1alpha3 and public v1beta1, each on its lane), and the state
// of each public provider line moves to ours (spec/lane-v1beta1.md §13.8,
// repo decision 0058).
//
// Each line: our provider creates the stack under the public family's
// FormRefs (the v1alpha3 one with create_lane = "v1alpha3", as its era
// did; the v1beta1 one with create_lane unset, the default). The working
// state is then replaced by the committed fixture in that public
// provider's layout — its source address, schema version 1, the attribute
// set of its surface file, the public FormRefs; one resource of each type
// and more — and the switch a user makes is made with the real CLI (`tofu
// state replace-provider registry.terraform.io/tako0614/takoform <ours>`).
// From there a refresh plans empty, a rollout and an update apply with
// create_lane unset and stay in the line's family, every type imports,
// and destroy removes everything (spec/decisions/0016-equivalent-identities.md).
// It runs under the pinned OpenTofu and, when one is on PATH, Terraform
// (clis): the switch is the same `state replace-provider` there.
func TestAccPublicProviderState(t *testing.T) {
	alpha, beta := testref.Dir(t), testref.V1beta1Dir(t)
	cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{alpha, beta}, func(d string) fs.FS { return os.DirFS(d) }))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clis(t) {
		t.Run(c.name, func(t *testing.T) {
			// terraform-plugin-testing reads the CLI from the environment;
			// no parallel test runs while a sequential one does
			t.Setenv("TF_ACC_TERRAFORM_PATH", c.path)
			t.Logf("running under %s %s", c.path, c.version)
			h := accHost(t, hosttest.Options{Catalog: cat, Lanes: lanes})
			t.Run("v1alpha3", func(t *testing.T) { movePublicState(t, h, cat, c, alphaLine(t, alpha)) })
			t.Run("v1beta1", func(t *testing.T) { movePublicState(t, h, cat, c, betaLine(t, beta)) })
		})
	}
}

// publicLine is one public provider line whose state moves to ours.
type publicLine struct {
	group     string // the Edge group of its FormRefs
	fixture   string // the committed state in its layout, under testdata/state
	surface   string // its surface file: type → schema version and attributes
	types     int    // how many types the fixture and the stack hold
	space     string
	createVia string // create_lane of the first apply ("" leaves it unset)
	hostname  string // the custom domain's hostname (claims are plane-wide)
	extra     func(dir string) string
	importBy  string // importID form: "NAME" or "JSON"
	imports   []string
	// refusal, when set, is what the plan of the rollout with create_lane
	// unset says (the diagnostic's phrases); the rollout then follows its
	// repair: create_lane = rolloutLane.
	refusal     []string
	rolloutLane string
}

// alphaLine is the public v1alpha3 provider (issue-12 layout): 12 types.
func alphaLine(t *testing.T, ref string) publicLine {
	return publicLine{group: edge.GroupV1alpha1, fixture: "testdata/state/public-provider-v1.tfstate",
		surface: filepath.Join(ref, "terraform-surface-baseline-v1alpha3.json"), types: 12, space: "prod",
		createVia: "v1alpha3", hostname: "app.example.com", importBy: "JSON", imports: importOrder,
		// the public v1alpha3 provider had no revision_owner: nothing ties
		// the rollout's new bundle (pinned name, no relation) to the
		// worker's family, so the plan stops before anything is written
		// and names the setting that keeps the configuration in its family
		refusal: []string{"Cannot choose the family to create takoform_worker_version in",
			`this plan creates its relation target WorkerBundle "app-bundle-2" in edge.forms.takoform.com/v1beta1`,
			`set the provider's create_lane (or TAKOFORM_CREATE_LANE) to "v1alpha3"`, "Code: takoform.provider/relation-target-other-family"},
		rolloutLane: "v1alpha3"}
}

// betaLine is public provider 2.1.1 (v1beta1): 15 types, the version
// serving static assets and the database migrated.
func betaLine(t *testing.T, ref string) publicLine {
	return publicLine{group: edge.GroupV1beta1, fixture: "testdata/state/public-provider-v1beta1.tfstate",
		surface: filepath.Join(ref, "terraform-surface-v1beta1-derived.json"), types: 15, space: "beta",
		hostname: "beta.example.com", extra: betaExtra, importBy: "NAME",
		imports: append(append([]string{}, importOrder...), "takoform_static_asset_bundle.site", "takoform_sqlite_migration_set.db", "takoform_sqlite_migration_application.db")}
}

// betaExtra is what the v1beta1 stack adds, from local files in dir: the
// site's static asset bundle and the database's migration set and
// application.
func betaExtra(dir string) string {
	f := func(path, mt string) string {
		return fmt.Sprintf("    { path = %q, media_type = %q, content_file = %q },\n", path, mt, filepath.Join(dir, path))
	}
	return `
resource "takoform_static_asset_bundle" "site" {
  name  = "site-1"
  files = [
` + f("index.html", "text/html") + f("app.css", "text/css") + `  ]
}

resource "takoform_sqlite_migration_set" "db" {
  name  = "db-migrations-1"
  files = [
` + f("0001_init.sql", "application/sql") + `  ]
}

resource "takoform_sqlite_migration_application" "db" {
  name          = "db-schema"
  database      = takoform_sqlite_database.db.name
  migration_set = takoform_sqlite_migration_set.db.name
}
`
}

// betaFiles are the v1beta1 stack's local asset and migration files.
var betaFiles = map[string]string{
	"index.html":    "<!doctype html><p>hello</p>\n",
	"app.css":       "p { color: teal }\n",
	"0001_init.sql": "CREATE TABLE visits (id INTEGER PRIMARY KEY, at TEXT NOT NULL);\n",
}

// lineConfig is the line's stack at rollout n (its modules in dir) with
// pinned revision names (public provider 2.1.1 has revision_owner, the
// v1alpha3 one does not; pinned names serve both), create_lane lane.
func lineConfig(t *testing.T, h *hosttest.Host, p publicLine, dir string, n int, lane string) string {
	for name, text := range betaFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := defaultStack(t)
	s.dir, s.hostname = dir, p.hostname
	if n > 1 {
		s.retention = 7200
	}
	hcl := s.hcl()
	hcl = strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  main_module    =", fmt.Sprintf("name        = \"app-bundle-%d\"\n  main_module =", n), 1)
	hcl = strings.Replace(hcl, "revision_owner = takoform_module_worker.app.name\n  worker         =", fmt.Sprintf("name           = \"app-version-%d\"\n  worker         =", n), 1)
	if strings.Contains(hcl, "revision_owner") {
		t.Fatal("the configuration still sets revision_owner")
	}
	if p.extra != nil {
		hcl = strings.Replace(hcl, `handlers       = ["fetch", "scheduled", "queue"]`, `handlers       = ["fetch", "scheduled", "queue"]
  assets                  = { bundle = takoform_static_asset_bundle.site.name, run_worker_first = false, not_found_handling = "single_page_application" }`, 1)
		hcl += p.extra(dir)
	}
	return laneProvider(h.URL, p.space, lane) + hcl
}

func movePublicState(t *testing.T, h *hosttest.Host, cat *form.Catalog, c cliTool, p publicLine) {
	fixture := readFile(t, p.fixture)
	checkPublicFixture(t, p, cat, fixture)
	modulesV1 := moduleDir(t, "v1")
	cfgEra := lineConfig(t, h, p, modulesV1, 1, p.createVia)
	cfg := lineConfig(t, h, p, modulesV1, 1, "")
	dir2 := t.TempDir()
	writeModules(t, dir2, "v2")
	cfg2 := lineConfig(t, h, p, dir2, 2, p.rolloutLane)
	base := t.TempDir()

	underPublicRefs := func(st *terraform.State) error {
		types := map[string]bool{}
		for addr, rs := range st.RootModule().Resources {
			a := rs.Primary.Attributes
			r := form.FormRef{APIVersion: a["form_api_version"], Kind: a["form_kind"], DefinitionVersion: a["form_definition_version"], SchemaDigest: a["form_schema_digest"]}
			if _, ok := cat.Form(r); !ok || r.APIVersion != p.group {
				return fmt.Errorf("%s is recorded under %s, which the public %s family does not define", addr, r, p.group)
			}
			types[rs.Type] = true
		}
		if len(types) != p.types {
			return fmt.Errorf("%d types in state, want %d", len(types), p.types)
		}
		return nil
	}
	// toPublicLayout replaces the working directory's state with the
	// committed fixture — the public provider's layout, held to its
	// surface by checkPublicFixture — with only the host-minted values
	// filled in from the host, then switches it to our provider with the
	// CLI, as a user does.
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
		if len(types) != p.types {
			t.Fatalf("%d types in the switched state, want %d", len(types), p.types)
		}
	}
	steps := []resource.TestStep{
		{Config: cfgEra, Check: underPublicRefs},
		{PreConfig: toPublicLayout, Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}
	if p.refusal != nil {
		steps = append(steps, resource.TestStep{Config: lineConfig(t, h, p, dir2, 2, ""), ExpectError: diagRE(p.refusal...)})
	}
	steps = append(steps, []resource.TestStep{
		{Config: cfg2, Check: resource.ComposeAggregateTestCheckFunc(underPublicRefs,
			resource.TestCheckResourceAttr("takoform_at_least_once_queue.jobs", "message_retention_seconds", "7200"),
			resource.TestCheckResourceAttr("takoform_worker_version.app", "name", "app-version-2"))},
		{Config: cfg2, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}...)
	for _, addr := range p.imports {
		steps = append(steps, resource.TestStep{Config: cfg2, ResourceName: addr, ImportState: true, ImportStateVerify: true,
			ImportStateIdFunc: importID(addr, p.importBy), ImportStateVerifyIdentifierAttribute: "uid",
			ImportStateVerifyIgnore: append([]string{"files"}, providerSideInputs...)})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		WorkingDir:               base,
		Steps:                    steps,
		CheckDestroy:             checkGone(t, h, p.space),
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
// layout: its source address, for each of the line's types the schema
// version and exactly the attribute set of its surface file, and FormRefs
// of the line's public family.
func checkPublicFixture(t *testing.T, p publicLine, cat *form.Catalog, fixture []byte) {
	t.Helper()
	baseline := map[string]struct {
		Version    int                        `json:"version"`
		Attributes map[string]json.RawMessage `json:"attributes"`
	}{}
	if err := json.Unmarshal(readFile(t, p.surface), &baseline); err != nil {
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
		if _, ok := cat.Form(fr); !ok || fr.APIVersion != p.group {
			t.Fatalf("%s is recorded under %s, not a FormRef of the public %s family", addr, fr, p.group)
		}
		types[r.Type] = true
	}
	if len(types) != p.types {
		t.Fatalf("the fixture holds %d types, want %d", len(types), p.types)
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
	pairs := []string{"{{modules_dir}}", modules}
	for _, r := range st.Resources {
		a := r.Instances[0].Attributes
		fr := form.FormRef{APIVersion: str(a["form_api_version"]), Kind: str(a["form_kind"]), DefinitionVersion: str(a["form_definition_version"]), SchemaDigest: str(a["form_schema_digest"])}
		res, err := refClient(t, h, fr).Read(context.Background(), client.Address{Space: str(a["space"]), Ref: fr, Name: str(a["name"])})
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

// refClient is a Go client of h, as the test credential, on the lane of
// ref's Edge group (spec/lane-v1beta1.md §2.5).
func refClient(t *testing.T, h *hosttest.Host, ref form.FormRef) *client.Client {
	t.Helper()
	o := client.Options{Token: hosttest.TokenA1}
	if ref.APIVersion == edge.GroupV1beta1 {
		o.Lane = wire.V1beta1
	}
	c, err := client.New(context.Background(), h.URL, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
