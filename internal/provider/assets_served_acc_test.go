package provider_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccStaticAssetsServed: a v1beta1 site authored through OpenTofu —
// a StaticAssetBundle from local files, a version pinning it as a
// single-page application, a deployment and an endpoint — is served by
// the host's data plane on real workerd (spec/runtime-v1.md §9.2): the
// endpoint answers the bundle's files with their media types, index.html
// for a client-side route and the worker for a POST; changing a file
// replaces the bundle and the version, and the endpoint then answers the
// new bytes.
func TestAccStaticAssetsServed(t *testing.T) {
	bin := enginetest.Binary(t)
	cat, lanes, err := host.LoadFamilies([]host.FamilySource{
		{Name: host.BuiltinFamily, FS: edge.Family()},
		{Name: "edge-v1beta1", FS: edge.FamilyV1beta1()},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := accHost(t, hosttest.Options{Catalog: cat, Lanes: lanes, Workerd: bin})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime})
	t.Cleanup(front.Close)
	dir := localTree(t, map[string]string{
		"index.html": "<p>spa", "app.css": "p{}", "app-v2.css": "p{color:red}",
		"worker.js": "export default { fetch(r) { return new Response('worker ' + r.method) } }\n",
	})
	cfg := func(css string) string {
		return providerBlock(h, "prod") + fmt.Sprintf(`
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_static_asset_bundle" "site" {
  revision_owner = takoform_module_worker.app.name
  files = [
    { path = "index.html", media_type = "text/html", content_file = %[1]q },
    { path = "css/app.css", media_type = "text/css", content_file = %[2]q },
  ]
  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules        = [{ name = "worker.js", content_file = %[3]q }]
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

resource "takoform_worker_deployment" "app" {
  name     = "app"
  worker   = takoform_module_worker.app.name
  versions = [{ worker_version = takoform_worker_version.app.name, weight = 10000 }]
}

resource "takoform_worker_endpoint" "app" {
  name       = "app"
  worker     = takoform_module_worker.app.name
  depends_on = [takoform_worker_deployment.app]
}
`, filepath.Join(dir, "index.html"), filepath.Join(dir, css), filepath.Join(dir, "worker.js"))
	}
	// serves checks, through the ingress at the endpoint's hostname, that
	// method path answers status, content type and body (polling while the
	// new generation starts).
	serves := func(method, path string, status int, contentType, body string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			ep := s.RootModule().Resources["takoform_worker_endpoint.app"]
			if ep == nil {
				return fmt.Errorf("no endpoint in the state")
			}
			var last string
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				req, err := http.NewRequest(method, front.URL+path, nil)
				if err != nil {
					return err
				}
				req.Host = ep.Primary.Attributes["hostname"]
				resp, err := front.Client().Do(req)
				if err != nil {
					return err
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					return err
				}
				if resp.StatusCode == status && resp.Header.Get("Content-Type") == contentType && string(b) == body {
					return nil
				}
				last = fmt.Sprintf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			return fmt.Errorf("%s %s answered %s, want %d %s %q", method, path, last, status, contentType, body)
		}
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories(edgeRegistry(t)), Steps: []resource.TestStep{
		{Config: cfg("app.css"), Check: resource.ComposeAggregateTestCheckFunc(
			serves("GET", "/css/app.css", 200, "text/css", "p{}"),
			serves("GET", "/", 200, "text/html", "<p>spa"),
			serves("GET", "/account/settings", 200, "text/html", "<p>spa"),
			serves("POST", "/css/app.css", 200, "text/plain;charset=UTF-8", "worker POST"),
			serves("GET", "/css/../index.html", 200, "text/plain;charset=UTF-8", "worker GET"),
		)},
		{Config: cfg("app-v2.css"), ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionCreateBeforeDestroy)},
		}, Check: serves("GET", "/css/app.css", 200, "text/css", "p{color:red}")},
	}})
}
