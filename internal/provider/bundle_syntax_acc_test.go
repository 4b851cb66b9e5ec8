package provider_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
)

const (
	goodMain = "export default { async fetch() { return new Response(\"ok\") } };\n"
	badMain  = "export default {\n  async fetch() { return new Response(\"ok\" }\n};\n" // line 2: ) missing
	badLib   = "export const greeting = \"hi\";\nexport const = 2;\n"                   // line 2: no binding name
)

// versionStack is a worker, a bundle named name with the given body, and
// a version of it serving fetch.
func versionStack(h *hosttest.Host, name, bundleBody string) string {
	return providerBlock(h, "prod") + `
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_worker_bundle" "app" {
  name = "` + name + `"
` + bundleBody + `}

resource "takoform_worker_version" "app" {
  name     = "app-version"
  worker   = takoform_module_worker.app.name
  bundle   = takoform_worker_bundle.app.name
  handlers = ["fetch"]
}
`
}

// bundleStack is versionStack with a bundle authored from main.js and
// lib.js at the given paths.
func bundleStack(h *hosttest.Host, mainPath, libPath string) string {
	return versionStack(h, "app-bundle", `  main_module = "main.js"
  modules = [
    { name = "main.js", content_file = `+mainPath+` },
    { name = "lib.js", content_file = `+libPath+` },
  ]
`)
}

func writeModule(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return `"` + p + `"`
}

// TestAccBundleModulesParsedAtPlan: a syntax error in the bundle's main
// module or in any other module refuses the plan naming the module, line
// and column, before anything is created; a content_file unknown at plan
// is parsed at apply, before any upload.
func TestAccBundleModulesParsedAtPlan(t *testing.T) {
	t.Parallel()
	h := accHost(t, hosttest.Options{})
	var uploads atomic.Int32
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/uploads") {
			uploads.Add(1)
		}
		h.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	gated := *h
	gated.URL = gate.URL
	dir := t.TempDir()
	good, bad := writeModule(t, dir, "main.js", goodMain), writeModule(t, dir, "bad-main.js", badMain)
	lib, libBad := writeModule(t, dir, "lib.js", "export const greeting = \"hi\";\n"), writeModule(t, dir, "bad-lib.js", badLib)
	unknownLib := strings.Replace(bundleStack(&gated, good, "terraform_data.lib.output"), "resource \"takoform_module_worker\"",
		"resource \"terraform_data\" \"lib\" {\n  input = "+libBad+"\n}\n\nresource \"takoform_module_worker\"", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: bundleStack(&gated, bad, lib), PlanOnly: true, ExpectError: diagRE("A bundle module does not parse",
				"bad-main.js", `module "main.js": line 2, column`, "Code: takoform.provider/module-syntax")},
			{Config: bundleStack(&gated, good, libBad), PlanOnly: true, ExpectError: diagRE("A bundle module does not parse",
				"bad-lib.js", `module "lib.js": line 2, column`, "Code: takoform.provider/module-syntax")},
			{Config: bundleStack(&gated, bad, libBad), ExpectError: diagRE(`module "main.js": line 2, column`)},
			{Config: unknownLib, ExpectError: diagRE("A bundle module does not parse", `module "lib.js": line 2, column`,
				"Resource: takoform_worker_bundle (prod/app-bundle)", "Code: takoform.provider/module-syntax")},
		},
	})
	c := hostClient(t, h)
	for kind, name := range map[string]string{"WorkerBundle": "app-bundle", "WorkerVersion": "app-version"} {
		if _, err := c.Read(context.Background(), client.Address{Space: "prod", Ref: edgeRef(t, kind), Name: name}); !client.IsNotFound(err) {
			t.Errorf("%s %s exists after refused plans (%v)", kind, name, err)
		}
	}
	if n := uploads.Load(); n != 0 {
		t.Errorf("%d upload requests were sent for bundles that do not parse", n)
	}
}

// TestAccHostRefusesUnparsableModule: a committed bundle (manifest_digest
// mode, the provider never sees the files) whose main module or another
// module does not parse is refused by the host when a version uses it,
// with module_syntax_error naming module, line and column — not
// handler_not_exported.
func TestAccHostRefusesUnparsableModule(t *testing.T) {
	t.Parallel()
	h := accHost(t, hosttest.Options{})
	c := hostClient(t, h)
	commit := func(files ...artifact.ModuleFile) string {
		m, blobs, err := artifact.Build("main.js", files)
		if err != nil {
			t.Fatal(err)
		}
		dg, err := c.UploadArtifact(context.Background(), *m, blobs)
		if err != nil {
			t.Fatal(err)
		}
		return dg
	}
	badMainDigest := commit(artifact.ModuleFile{Name: "main.js", Data: []byte(badMain)})
	badLibDigest := commit(artifact.ModuleFile{Name: "main.js", Data: []byte(goodMain)}, artifact.ModuleFile{Name: "lib.js", Data: []byte(badLib)})
	cfg := func(name, digest string) string {
		return versionStack(h, name, "  manifest_digest = \""+digest+"\"\n")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg("bad-main", badMainDigest), ExpectError: diagRE(`module "main.js": line 2, column`, "Host reason: module_syntax_error")},
			{Config: cfg("bad-lib", badLibDigest), ExpectError: diagRE(`module "lib.js": line 2, column`, "Host reason: module_syntax_error")},
		},
	})
}
