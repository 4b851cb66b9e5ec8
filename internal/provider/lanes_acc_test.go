package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// dualHost starts one host serving our v1alpha1 family on lane v1alpha3
// and our v1beta1 family on lane v1beta1 (spec/lane-v1beta1.md §2.5).
func dualHost(t *testing.T) *hosttest.Host {
	t.Helper()
	cat, lanes, err := host.LoadFamilies([]host.FamilySource{{Name: "v1alpha1", FS: edge.Family()}, {Name: "v1beta1", FS: edge.FamilyV1beta1()}})
	if err != nil {
		t.Fatal(err)
	}
	return accHost(t, hosttest.Options{Catalog: cat, Lanes: lanes})
}

// laneProvider is the provider block for endpoint and space with
// create_lane set (lane "" leaves it unset).
func laneProvider(endpoint, space, lane string) string {
	setting := ""
	if lane != "" {
		setting = fmt.Sprintf("  create_lane = %q\n", lane)
	}
	return fmt.Sprintf(`
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {
  endpoint = %q
  token    = %q
  space    = %q
%s}
`, endpoint, hosttest.TokenA1, space, setting)
}

// appStack is a small worker aggregate: worker, KV namespace, bundle,
// version (binding the namespace) and deployment, from module files in dir.
func appStack(dir string) string {
	return fmt.Sprintf(`
resource "takoform_module_worker" "app" {
  name = "app"
}

resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}

resource "takoform_worker_bundle" "app" {
  revision_owner = takoform_module_worker.app.name
  main_module    = "worker.js"
  modules = [
    { name = "worker.js", content_file = %q },
    { name = "lib.js", content_file = %q, content_type = "application/javascript+module" },
  ]
  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_version" "app" {
  revision_owner = takoform_module_worker.app.name
  worker         = takoform_module_worker.app.name
  bundle         = takoform_worker_bundle.app.name
  handlers       = ["fetch"]
  kv_bindings    = [{ name = "CACHE", target_name = takoform_edge_kv_namespace.cache.name }]
  lifecycle {
    create_before_destroy = true
  }
}

resource "takoform_worker_deployment" "app" {
  name   = "app"
  worker = takoform_module_worker.app.name
  versions = [
    { worker_version = takoform_worker_version.app.name, weight = 10000 },
  ]
}
`, filepath.Join(dir, "worker.js"), filepath.Join(dir, "lib.js"))
}

var appAddresses = []string{"takoform_module_worker.app", "takoform_edge_kv_namespace.cache", "takoform_worker_bundle.app",
	"takoform_worker_version.app", "takoform_worker_deployment.app"}

// inGroup checks every address records a FormRef of group.
func inGroup(group string, addrs ...string) resource.TestCheckFunc {
	var checks []resource.TestCheckFunc
	for _, a := range addrs {
		checks = append(checks, resource.TestCheckResourceAttr(a, "form_api_version", group))
	}
	return resource.ComposeAggregateTestCheckFunc(checks...)
}

// TestAccLanes drives one host serving both Edge families through the
// create family rule (spec/lane-v1beta1.md §13.6, §13.7, §13.9), in two
// spaces at once: a configuration written in the v1alpha3 era keeps its
// state and rolls out in v1alpha1 with no edit, refuses a create_lane that
// would split the aggregate, and meets the ambiguity of a name both
// families hold; a new configuration creates under v1beta1; imports bind
// as §13.7 says; a lane the host does not answer fails only its own
// resources.
func TestAccLanes(t *testing.T) {
	t.Parallel()
	h := dualHost(t)
	t.Run("era", func(t *testing.T) {
		t.Parallel()
		v1, v2, v3 := moduleDir(t, "v1"), moduleDir(t, "v2"), moduleDir(t, "v3")
		cfg := func(lane, dir string) string { return laneProvider(h.URL, "era", lane) + appStack(dir) }
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: factories(edgeRegistry(t)),
			Steps: []resource.TestStep{
				// the v1alpha3-era configuration: created in v1alpha1
				{Config: cfg("v1alpha3", v1), Check: inGroup(edge.GroupV1alpha1, appAddresses...)},
				// on this build with no create_lane: its state plans empty
				{Config: cfg("", v1), PlanOnly: true},
				// a code rollout with no edit keeps creating in v1alpha1
				{
					Config: cfg("", v2),
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("takoform_worker_bundle.app", plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectResourceAction("takoform_worker_version.app", plancheck.ResourceActionCreateBeforeDestroy),
					}},
					Check: inGroup(edge.GroupV1alpha1, appAddresses...),
				},
				// create_lane never moves existing state
				{Config: cfg("v1beta1", v2), PlanOnly: true},
				// create_lane = "v1beta1" would create the version in
				// v1beta1 while its worker and namespace exist in v1alpha1
				{
					Config: cfg("v1beta1", v3),
					ExpectError: diagRE("Cannot choose the family to create takoform_worker_version in",
						"would be created in edge.forms.takoform.com/v1beta1, but its relation target", "exists only in edge.forms.takoform.com/v1alpha1",
						"Code: takoform.provider/relation-target-other-family"),
				},
				// a worker "app" in v1beta1 too, created by a client of that lane
				{PreConfig: func() { betaWorker(t, h, "era", "app") }, Config: cfg("", v2), PlanOnly: true},
				// the name is now held by both families: a data source
				// refuses to pick one (the create family, v1beta1 for a
				// worker with no targets, is read first)
				{
					Config: cfg("", v2) + `
data "takoform_module_worker" "app" {
  name = "app"
}
`,
					ExpectError: diagRE(`takoform_module_worker "app" exists in two families`,
						"edge.forms.takoform.com/v1beta1 ModuleWorker", "edge.forms.takoform.com/v1alpha1 ModuleWorker",
						"Code: takoform.provider/data-source-ambiguous"),
				},
				// and a new attachment naming it, with no create_lane, is
				// refused naming both families and the setting
				{
					Config: cfg("", v2) + `
resource "takoform_worker_cron_trigger" "nightly" {
  name   = "nightly"
  worker = "app"
  cron   = "0 3 * * *"
}
`,
					ExpectError: diagRE(`the relation target ModuleWorker "app" exists in both edge.forms.takoform.com/v1alpha1 and edge.forms.takoform.com/v1beta1`,
						"create_lane", "Code: takoform.provider/relation-target-other-family"),
				},
			},
		})
	})
	t.Run("import", func(t *testing.T) {
		t.Parallel()
		alpha := edgeRef(t, "EdgeKVNamespace")
		importBlock := func(addr, name, id string) string {
			return fmt.Sprintf("\nimport {\n  to = %s\n  id = %s\n}\n\nresource %q %q {\n  name = %q\n}\n",
				addr, id, strings.Split(addr, ".")[0], strings.Split(addr, ".")[1], name)
		}
		jsonID := func(api, digest, name string) string {
			return fmt.Sprintf("jsonencode({ apiVersion = %q, kind = %q, definitionVersion = %q, schemaDigest = %q, name = %q })",
				api, alpha.Kind, alpha.DefinitionVersion, digest, name)
		}
		setup := func() {
			if _, err := applyKV(hostClient(t, h), alpha, "imp", "x"); err != nil {
				t.Fatal(err)
			}
			if _, err := applyKV(hostClient(t, h), alpha, "imp", "z"); err != nil {
				t.Fatal(err)
			}
			betaKV(t, h, "imp", "y")
		}
		cfg := laneProvider(h.URL, "imp", "") +
			importBlock("takoform_edge_kv_namespace.y", "y", `"imp/y"`) +
			importBlock("takoform_edge_kv_namespace.x", "x", jsonID(alpha.APIVersion, alpha.SchemaDigest, "x"))
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: factories(edgeRegistry(t)),
			Steps: []resource.TestStep{
				// SPACE/NAME binds to the create ref (v1beta1 here); a JSON
				// import ID names a ref of the other family
				{PreConfig: setup, Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(
					inGroup(edge.GroupV1beta1, "takoform_edge_kv_namespace.y"), inGroup(edge.GroupV1alpha1, "takoform_edge_kv_namespace.x"))},
				{Config: cfg, PlanOnly: true},
				// so a v1alpha1 resource is not found by SPACE/NAME
				{
					Config:      cfg + importBlock("takoform_edge_kv_namespace.z", "z", `"imp/z"`),
					ExpectError: diagRE("Cannot import takoform_edge_kv_namespace", "Form: edge.forms.takoform.com/v1beta1 EdgeKVNamespace"),
				},
				// a ref without a codec is refused naming the supported ones
				{
					Config: cfg + importBlock("takoform_edge_kv_namespace.z", "z", jsonID(edge.GroupV1beta1, "sha256:"+strings.Repeat("0", 64), "z")),
					ExpectError: diagRE("This provider build has no codec for the FormRef to import",
						"takoform_edge_kv_namespace supports", edge.GroupV1alpha1+" EdgeKVNamespace", edge.GroupV1beta1+" EdgeKVNamespace",
						"Code: takoform.provider/unknown-form-ref"),
				},
			},
		})
	})
	t.Run("unavailable", func(t *testing.T) {
		t.Parallel()
		laneUnavailable(t, h)
	})
	t.Run("fresh", func(t *testing.T) {
		t.Parallel()
		dir, v2 := moduleDir(t, "v1"), moduleDir(t, "v2")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: factories(edgeRegistry(t)),
			Steps: []resource.TestStep{
				{Config: laneProvider(h.URL, "fresh", "") + appStack(dir), Check: inGroup(edge.GroupV1beta1, appAddresses...)},
				{Config: laneProvider(h.URL, "fresh", "") + appStack(dir), PlanOnly: true},
				// a rollout on lane v1beta1: the deployment is updated there
				{
					Config: laneProvider(h.URL, "fresh", "") + appStack(v2),
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("takoform_worker_deployment.app", plancheck.ResourceActionUpdate),
					}},
					Check: inGroup(edge.GroupV1beta1, appAddresses...),
				},
			},
		})
	})
}

// betaWorker creates the ModuleWorker name in space under our v1beta1
// ref, as a client of lane v1beta1.
func betaWorker(t *testing.T, h *hosttest.Host, space, name string) {
	t.Helper()
	betaResource(t, h, "ModuleWorker", space, name)
}

// betaKV creates the EdgeKVNamespace name in space under our v1beta1 ref.
func betaKV(t *testing.T, h *hosttest.Host, space, name string) {
	t.Helper()
	betaResource(t, h, "EdgeKVNamespace", space, name)
}

// betaResource creates a resource of kind with an empty spec under our
// v1beta1 ref, as a client of lane v1beta1.
func betaResource(t *testing.T, h *hosttest.Host, kind, space, name string) {
	t.Helper()
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := edge.IndexV1beta1()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range idx.Forms {
		if f.FormRef.Kind == kind {
			r := f.FormRef
			if _, err := applyKV(c, form.FormRef{APIVersion: r.APIVersion, Kind: r.Kind, DefinitionVersion: r.DefinitionVersion, SchemaDigest: r.SchemaDigest}, space, name); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("our v1beta1 family has no %s", kind)
}

// laneUnavailable: behind a front that refuses lane v1beta1's discovery,
// the resource recorded under a v1beta1 ref reports lane-unavailable
// while the provider still configures on lane v1alpha3 and refreshes the
// v1alpha1 one.
func laneUnavailable(t *testing.T, h *hosttest.Host) {
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == wire.V1beta1.DiscoveryPath {
			http.NotFound(w, r)
			return
		}
		h.Server.ServeHTTP(w, r)
	}))
	defer front.Close()
	kv := func(endpoint, lane string, names ...string) string {
		cfg := laneProvider(endpoint, "lanes", lane)
		for _, n := range names {
			cfg += fmt.Sprintf("\nresource \"takoform_edge_kv_namespace\" %q {\n  name = %q\n}\n", n, n)
		}
		return cfg
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: kv(h.URL, "v1alpha3", "a"), Check: inGroup(edge.GroupV1alpha1, "takoform_edge_kv_namespace.a")},
			{Config: kv(h.URL, "v1beta1", "a", "b"), Check: resource.ComposeAggregateTestCheckFunc(inGroup(edge.GroupV1alpha1, "takoform_edge_kv_namespace.a"),
				inGroup(edge.GroupV1beta1, "takoform_edge_kv_namespace.b"))},
			{
				Config: kv(front.URL, "v1beta1", "a", "b"),
				ExpectError: diagRE("with takoform_edge_kv_namespace.b",
					"lane forms.takoform.com/v1beta1", "Code: takoform.provider/lane-unavailable"),
			},
			{Config: kv(h.URL, "v1beta1", "a", "b"), PlanOnly: true},
		},
	})
}
