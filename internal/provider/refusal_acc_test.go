package provider_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
)

// diagRE matches a diagnostic holding every part in order. OpenTofu wraps
// long detail lines, so any run of spaces in a part matches any run of
// whitespace.
func diagRE(parts ...string) *regexp.Regexp {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(q, `.*`))
}

const (
	repairSpace  = "Use a SpaceID of 1-255 code points with no control characters or '/', and no leading or trailing whitespace."
	repairRule   = "Correct the value the message names; the host would refuse it too."
	repairInstal = "Install the Form on the host, or point the provider at a host that supports it."
)

func refusalCase(t *testing.T, steps ...resource.TestStep) {
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: steps})
}

// TestAccRefusalBadSpace: a space that breaks the SpaceID rule is refused
// before any host call — in the provider block (Configure) and on a
// resource (plan time).
func TestAccRefusalBadSpace(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	refusalCase(t,
		resource.TestStep{
			Config:      providerBlock(h, " prod") + `resource "takoform_edge_kv_namespace" "cache" { name = "cache" }`,
			ExpectError: diagRE("Invalid provider space", "Code: takoform.provider/invalid-space", repairSpace),
		},
		resource.TestStep{
			Config: providerBlock(h, "prod") + `resource "takoform_edge_kv_namespace" "cache" {
  name  = "cache"
  space = "tenant/prod"
}`,
			ExpectError: diagRE("Invalid space", "Resource: takoform_edge_kv_namespace (tenant/prod/cache)",
				"Code: takoform.provider/invalid-space", repairSpace),
		},
	)
}

// TestAccRefusalHostSupport: plan-time capability checks against the
// host's support profiles (spec/host-api-v1alpha3.md §8.2): a host whose catalog lacks
// WorkerCronTrigger publishes no profile for it; a host lacking the
// module-worker.sqlite Binding cannot take a version that uses it; a
// bundle above maximumBundleBytes is refused before any upload.
func TestAccRefusalHostSupport(t *testing.T) {
	cat, err := host.LoadCatalog(withoutDir{edge.Family(), "forms/worker-cron-trigger"})
	if err != nil {
		t.Fatal(err)
	}
	h := accHost(t, hosttest.Options{Catalog: cat})
	refusalCase(t, resource.TestStep{
		Config: providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_cron_trigger" "nightly" {
  name   = "nightly"
  worker = takoform_module_worker.app.name
  cron   = "0 3 * * *"
}`,
		ExpectError: diagRE("The host does not support this Form", "Resource: takoform_worker_cron_trigger (prod/nightly)",
			"Form: edge.forms.takoform.com/v1alpha1 WorkerCronTrigger 0.1.0", "Code: takoform.provider/host-does-not-support-form", repairInstal),
	})

	cat, err = host.LoadCatalog(withoutDir{edge.Family(), "bindings/module-worker.sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	h = accHost(t, hosttest.Options{Catalog: cat})
	dir := moduleDir(t, "v1")
	version := `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_sqlite_database" "db" {
  name = "db"
}

resource "takoform_worker_bundle" "app" {
  name        = "app-bundle"
  main_module = "worker.js"
  modules     = [{ name = "worker.js", content_file = "` + dir + `/worker.js" }, { name = "lib.js", content_file = "` + dir + `/lib.js" }]
}

resource "takoform_worker_version" "app" {
  name            = "app-version"
  worker          = takoform_module_worker.app.name
  bundle          = takoform_worker_bundle.app.name
  handlers        = ["fetch"]
  sqlite_bindings = [{ name = "DB", target_name = takoform_sqlite_database.db.name }]
}`
	if err := os.WriteFile(filepath.Join(dir, "huge.bin"), make([]byte, 10<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	refusalCase(t,
		resource.TestStep{
			Config: providerBlock(h, "prod") + version,
			ExpectError: diagRE("The host does not implement a contract this Form needs", "binding module-worker.sqlite@",
				"Resource: takoform_worker_version (prod/app-version)", "Code: takoform.provider/host-does-not-support-form", repairInstal),
		},
		resource.TestStep{
			Config: providerBlock(h, "prod") + strings.Replace(version, `{ name = "lib.js"`, `{ name = "huge.bin", content_file = "`+dir+`/huge.bin" }, { name = "lib.js"`, 1),
			ExpectError: diagRE("The host limit is exceeded", "maximumBundleBytes", "Resource: takoform_worker_bundle (prod/app-bundle)",
				"Code: takoform.provider/host-limit-exceeded", "Stay within the host limit the message names, or ask the host operator to raise it."),
		},
	)
}

// withoutDir hides one directory of a file system.
type withoutDir struct {
	fs.FS
	dir string
}

func (w withoutDir) Open(name string) (fs.File, error) {
	if name == w.dir || strings.HasPrefix(name, w.dir+"/") {
		return nil, fs.ErrNotExist
	}
	return w.FS.Open(name)
}

func (w withoutDir) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(w.FS, name)
	var out []fs.DirEntry
	for _, e := range entries {
		if p := strings.TrimPrefix(name+"/"+e.Name(), "./"); p != w.dir {
			out = append(out, e)
		}
	}
	return out, err
}

// TestAccRefusalPlanRules: a schema violation and a cron typo are refused
// at plan time by the same rules the host enforces, naming the pointer.
func TestAccRefusalPlanRules(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	refusalCase(t,
		resource.TestStep{
			Config: providerBlock(h, "prod") + `
resource "takoform_at_least_once_queue" "jobs" {
  name                      = "jobs"
  message_retention_seconds = 10
}`,
			ExpectError: diagRE("Invalid takoform_at_least_once_queue", "Resource: takoform_at_least_once_queue (prod/jobs)",
				"Pointer: /messageRetentionSeconds", "Code: takoform.provider/plan-rule", repairRule),
		},
		resource.TestStep{
			Config: providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_cron_trigger" "nightly" {
  name   = "nightly"
  worker = takoform_module_worker.app.name
  cron   = "0 3 * * MON"
}`,
			ExpectError: diagRE("Invalid takoform_worker_cron_trigger", "Resource: takoform_worker_cron_trigger (prod/nightly)",
				"Pointer: /cron", "Code: takoform.provider/plan-rule", repairRule),
		},
		resource.TestStep{
			Config: providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_deployment" "app" {
  name     = "app"
  worker   = takoform_module_worker.app.name
  versions = [{ worker_version = "v1", weight = 9000 }]
}`,
			ExpectError: diagRE("Invalid takoform_worker_deployment", "Resource: takoform_worker_deployment (prod/app)",
				"Code: takoform.provider/plan-rule", repairRule),
		},
	)
}

// TestAccRefusalMissingTarget: a relation to a resource that does not
// exist is refused by the host naming the pointer.
func TestAccRefusalMissingTarget(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	refusalCase(t, resource.TestStep{
		Config: providerBlock(h, "prod") + `
resource "takoform_worker_endpoint" "app" {
  name   = "app"
  worker = "ghost"
}`,
		ExpectError: diagRE("Cannot create takoform_worker_endpoint", "Resource: takoform_worker_endpoint (prod/app)",
			"Pointer: /worker", "Code: resource_not_found (host, HTTP 404)", "Retryable: no",
			"Create the resource, or check its name, space and FormRef."),
	})
}

// pinned is a worker whose version binds the KV namespace "cache"; the
// binding names it literally when literal is set, so the namespace can
// leave the configuration while the version stays.
func pinned(t *testing.T, h *hosttest.Host, dir string, withKV, literal bool) string {
	target := "takoform_edge_kv_namespace.cache.name"
	if literal {
		target = `"cache"`
	}
	kv := ""
	if withKV {
		kv = `
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}
`
	}
	return providerBlock(h, "prod") + kv + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_bundle" "app" {
  name        = "app-bundle"
  main_module = "worker.js"
  modules     = [{ name = "worker.js", content_file = "` + dir + `/worker.js" }, { name = "lib.js", content_file = "` + dir + `/lib.js" }]
}

resource "takoform_worker_version" "app" {
  name        = "app-version"
  worker      = takoform_module_worker.app.name
  bundle      = takoform_worker_bundle.app.name
  handlers    = ["fetch"]
  kv_bindings = [{ name = "CACHE", target_name = ` + target + ` }]
}
`
}

// TestAccRefusalPinnedDelete: destroying a KV namespace a live version
// still binds is refused with dependency_in_use; state keeps it.
func TestAccRefusalPinnedDelete(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	dir := moduleDir(t, "v1")
	refusalCase(t,
		resource.TestStep{Config: pinned(t, h, dir, true, false)},
		resource.TestStep{
			Config: pinned(t, h, dir, false, true),
			ExpectError: diagRE("Cannot delete takoform_edge_kv_namespace", "Resource: takoform_edge_kv_namespace (prod/cache)",
				"Code: dependency_in_use (host, HTTP 409)", "Retryable: no",
				"Delete or repoint the dependents the message names first, then delete this resource."),
		},
		// the refused delete kept the namespace in state and on the host
		resource.TestStep{Config: pinned(t, h, dir, true, false), Check: resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "ready", "true")},
	)
}

// TestAccRefusalSecondDeployment: a worker has at most one deployment;
// the host refuses a second one.
func TestAccRefusalSecondDeployment(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	s := defaultStack(t)
	s.extra = `
resource "takoform_worker_deployment" "second" {
  name       = "app-second"
  worker     = takoform_module_worker.app.name
  versions   = [{ worker_version = takoform_worker_version.app.name, weight = 10000 }]
  depends_on = [takoform_worker_deployment.app]
}
`
	refusalCase(t, resource.TestStep{
		Config: providerBlock(h, "prod") + s.hcl(),
		ExpectError: diagRE("Cannot create takoform_worker_deployment", "Resource: takoform_worker_deployment (prod/app-second)",
			"Code: invalid_argument (host, HTTP 400)", "Retryable: no", "Correct the value the message names and apply again."),
	})
}
