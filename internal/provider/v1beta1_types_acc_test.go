package provider_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
)

// The three v1beta1-only types and WorkerVersion.assets through the real
// OpenTofu CLI (spec/lane-v1beta1.md §13.2, §13.3). The plan-time
// refusals run against any host: they are decided before the provider
// asks one; the applies create on lane v1beta1 (§13.6).

// bothLanesHost is a host serving both Edge families, each on its lane
// (spec/lane-v1beta1.md §2.5).
func bothLanesHost(t *testing.T) *hosttest.Host {
	t.Helper()
	cat, lanes, err := host.LoadFamilies([]host.FamilySource{
		{Name: host.BuiltinFamily, FS: edge.Family()},
		{Name: "edge-v1beta1", FS: edge.FamilyV1beta1()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return accHost(t, hosttest.Options{Catalog: cat, Lanes: lanes})
}

// localTree writes files (relative path → text) under a new directory and
// returns it.
func localTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAccWorkerVersionAssetsNeedAV1beta1Ref: assets configured where the
// planned ref is a v1alpha1 WorkerVersion (a host serving only lane
// v1alpha3 creates under it) is refused at plan with
// ref-lacks-attribute, naming the ref (repo decision 0003 rule 3).
func TestAccWorkerVersionAssetsNeedAV1beta1Ref(t *testing.T) {
	cat, lanes, err := host.LoadFamilies([]host.FamilySource{{Name: "v1alpha1", FS: edge.Family()}})
	if err != nil {
		t.Fatal(err)
	}
	h := accHost(t, hosttest.Options{Catalog: cat, Lanes: lanes})
	src := localTree(t, map[string]string{"worker.js": "export default { fetch() { return new Response('ok') } }\n"})
	refusalCase(t, resource.TestStep{
		Config: providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules        = [{ name = "worker.js", content_file = "` + filepath.Join(src, "worker.js") + `" }]
}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch"]
  assets = {
    bundle             = "site"
    run_worker_first   = false
    not_found_handling = "none"
  }
}
`,
		ExpectError: diagRE("The FormRef this resource is created under has no member for assets",
			"takoform_worker_version sets assets, but the resource would be created under edge.forms.takoform.com/v1alpha1 WorkerVersion 0.1.0",
			"Code: takoform.provider/ref-lacks-attribute", "Remove the attribute from this resource's configuration"),
	})
}

// TestAccV1beta1FilesRefusedAtPlan: local files breaking a manifest rule
// of spec/lane-v1beta1.md §3.6 are refused at plan, by the rule the host
// applies at commit and with its pointer, before any upload; so are both
// modes at once and neither.
func TestAccV1beta1FilesRefusedAtPlan(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	dir := localTree(t, map[string]string{"index.html": "<p>hi", "0001.sql": "SELECT 1;"})
	file := func(path, mt, name string) string {
		return `{ path = "` + path + `", media_type = "` + mt + `", content_file = "` + filepath.Join(dir, name) + `" }`
	}
	bundle := func(typ, body string) string {
		return providerBlock(h, "prod") + "resource \"" + typ + "\" \"x\" {\n  revision_owner = \"app\"\n" + body + "\n}\n"
	}
	for _, c := range []struct {
		name, config string
		want         *regexp.Regexp
	}{
		{"media type with parameters", bundle("takoform_static_asset_bundle", "  files = ["+file("index.html", "text/html; charset=utf-8", "index.html")+"]"),
			diagRE("The bundle's files break a manifest rule (artifact.media-type)", "Pointer: /files/0/mediaType", "Code: takoform.provider/plan-rule")},
		{"migration not SQL", bundle("takoform_sqlite_migration_set", "  files = ["+file("0001.sql", "text/plain", "0001.sql")+"]"),
			diagRE("(artifact.migration-media-type)", "must be exactly application/sql", "Code: takoform.provider/plan-rule")},
		{"duplicate path", bundle("takoform_sqlite_migration_set", "  files = ["+file("0001.sql", "application/sql", "0001.sql")+", "+file("0001.sql", "application/sql", "0001.sql")+"]"),
			diagRE("(artifact.duplicate)", "Pointer: /files/1/path", "Code: takoform.provider/plan-rule")},
		{"bad path", bundle("takoform_static_asset_bundle", "  files = ["+file("../index.html", "text/html", "index.html")+"]"),
			diagRE("(artifact.path)", "Pointer: /files/0/path", "Code: takoform.provider/plan-rule")},
		{"both modes", bundle("takoform_static_asset_bundle", "  manifest_digest = \"sha256:"+repeat64("a")+"\"\n  files = ["+file("index.html", "text/html", "index.html")+"]"),
			diagRE("A bundle is declared in one mode", "set manifest_digest, or files, not both", "Code: takoform.provider/bundle-files")},
		{"neither", bundle("takoform_sqlite_migration_set", ""),
			diagRE("A bundle needs its files", "set manifest_digest of a committed MigrationBundle manifest, or files", "Code: takoform.provider/bundle-files")},
	} {
		t.Run(c.name, func(t *testing.T) {
			refusalCase(t, resource.TestStep{Config: c.config, ExpectError: c.want})
		})
	}
}

func repeat64(s string) string {
	out := ""
	for len(out) < 64 {
		out += s
	}
	return out[:64]
}

// TestAccStaticAssetBundleFiles: a static asset bundle authored from
// local files gets a derived name and the committed manifest's digest; a
// files edit that keeps the digest (reordered, another local file with
// the same bytes) changes state only; changed bytes replace it. The
// worker version attaching it records assets, and the data source reads
// it with outputs_json "{}".
func TestAccStaticAssetBundleFiles(t *testing.T) {
	h := bothLanesHost(t)
	dir := localTree(t, map[string]string{
		"index.html": "<p>hi", "copy.html": "<p>hi", "app.css": "p{}", "changed.html": "<p>changed",
		"worker.js": "export default { fetch() { return new Response('ok') } }\n",
	})
	cfg := func(files string) string {
		return providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_static_asset_bundle" "site" {
  revision_owner = takoform_module_worker.app.name
  files          = [` + files + `]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules        = [{ name = "worker.js", content_file = "` + filepath.Join(dir, "worker.js") + `" }]
}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch"]
  assets = {
    bundle             = takoform_static_asset_bundle.site.name
    run_worker_first   = false
    not_found_handling = "single_page_application"
  }

  lifecycle {
    create_before_destroy = true
  }
}

data "takoform_static_asset_bundle" "site" {
  name = takoform_static_asset_bundle.site.name
}
`
	}
	f := func(path, mt, name string) string {
		return `{ path = "` + path + `", media_type = "` + mt + `", content_file = "` + filepath.Join(dir, name) + `" },`
	}
	const addr = "takoform_static_asset_bundle.site"
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: []resource.TestStep{
		{Config: cfg(f("index.html", "text/html", "index.html") + f("app.css", "text/css", "app.css")), Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestMatchResourceAttr(addr, "name", regexp.MustCompile(`^static-asset-bundle-[0-9a-f]{12}-[0-9a-f]{12}$`)),
			resource.TestMatchResourceAttr(addr, "manifest_digest", regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)),
			resource.TestCheckResourceAttr(addr, "files.0.size", "5"),
			resource.TestCheckResourceAttr(addr, "form_api_version", edge.GroupV1beta1),
			resource.TestCheckResourceAttr(addr, "outputs_json", "{}"),
			resource.TestCheckResourceAttr(addr, "ready", "true"),
			resource.TestCheckResourceAttr("takoform_worker_version.app", "assets.not_found_handling", "single_page_application"),
			resource.TestCheckResourceAttrPair("takoform_worker_version.app", "assets.bundle", addr, "name"),
			resource.TestCheckResourceAttrPair("data.takoform_static_asset_bundle.site", "uid", addr, "uid"),
			resource.TestCheckResourceAttr("data.takoform_static_asset_bundle.site", "outputs_json", "{}"),
		)},
		{Config: cfg(f("app.css", "text/css", "app.css") + f("index.html", "text/html", "copy.html")), ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate), plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionNoop)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}},
		{Config: cfg(f("app.css", "text/css", "app.css") + f("index.html", "text/html", "changed.html")), ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreateBeforeDestroy),
				plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionCreateBeforeDestroy)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}},
	}})
}

// TestAccSQLiteMigrationApplication: a migration set authored from local
// SQL files is applied to a database; appending a migration makes a new
// set and replaces the application, which the host accepts because the
// ledger is a prefix of the new set (spec/lane-v1beta1.md §6.7).
func TestAccSQLiteMigrationApplication(t *testing.T) {
	h := bothLanesHost(t)
	dir := localTree(t, map[string]string{
		"0001_notes.sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY);", "0002_body.sql": "ALTER TABLE notes ADD COLUMN body TEXT;",
	})
	f := func(name string) string {
		return `{ path = "` + name + `", media_type = "application/sql", content_file = "` + filepath.Join(dir, name) + `" },`
	}
	cfg := func(files string) string {
		return providerBlock(h, "prod") + `
resource "takoform_sqlite_database" "notes" {
  name = "notes"
}

resource "takoform_sqlite_migration_set" "notes" {
  revision_owner = takoform_sqlite_database.notes.name
  files          = [` + files + `]

  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_sqlite_migration_application" "notes" {
  name          = "notes-schema"
  database      = takoform_sqlite_database.notes.name
  migration_set = takoform_sqlite_migration_set.notes.name
}

data "takoform_sqlite_migration_application" "notes" {
  name = takoform_sqlite_migration_application.notes.name
}
`
	}
	const app = "takoform_sqlite_migration_application.notes"
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: []resource.TestStep{
		{Config: cfg(f("0001_notes.sql")), Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestMatchResourceAttr("takoform_sqlite_migration_set.notes", "name", regexp.MustCompile(`^sqlite-migration-set-[0-9a-f]{12}-[0-9a-f]{12}$`)),
			resource.TestCheckResourceAttr(app, "form_kind", "SQLiteMigrationApplication"),
			resource.TestCheckResourceAttr(app, "ready", "true"),
			resource.TestCheckResourceAttr(app, "outputs_json", "{}"),
			resource.TestCheckResourceAttrPair("data.takoform_sqlite_migration_application.notes", "uid", app, "uid"),
		)},
		{Config: cfg(f("0001_notes.sql") + f("0002_body.sql")), ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(app, plancheck.ResourceActionDestroyBeforeCreate)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}, Check: resource.TestCheckResourceAttr(app, "ready", "true")},
	}})
}
