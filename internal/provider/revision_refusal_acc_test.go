package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccRefusalRevisionNames: a revision is never replaced under its
// pinned name (decision 0029: both apply orders deadlock), and a revision
// without a name needs revision_owner to derive one — both refused at plan
// time.
func TestAccRefusalRevisionNames(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	dir := moduleDir(t, "v1")
	base := pinned(t, h, dir, true, false)
	refusalCase(t,
		resource.TestStep{Config: base},
		resource.TestStep{
			Config: strings.Replace(base, `handlers    = ["fetch"]`, `handlers    = ["fetch", "scheduled"]`, 1),
			ExpectError: diagRE("A revision cannot be replaced under the same name", "Resource: takoform_worker_version (prod/app-version)",
				"Code: takoform.provider/revision-replaced-in-place",
				"Remove the pinned name so the new revision gets a derived name, or give the new revision a new name."),
		},
		resource.TestStep{
			Config: strings.Replace(base, `name        = "app-bundle"`, `revision_owner = "app"
  name        = "app-bundle"`, 1),
			ExpectError: diagRE("Both name and revision_owner are set", "Code: takoform.provider/invalid-config"),
		},
		resource.TestStep{
			Config: base + `
resource "takoform_worker_bundle" "nameless" {
  manifest_digest = takoform_worker_bundle.app.manifest_digest
}`,
			ExpectError: diagRE("A revision needs a name or a revision_owner", "Resource: takoform_worker_bundle",
				"Code: takoform.provider/revision-owner-missing",
				"Set name, or set revision_owner (usually the worker's name) so the provider can derive one."),
		},
	)
}

// TestAccRefusalImportID: import identifiers the one parser refuses, and
// an exact identity this build has no codec for.
func TestAccRefusalImportID(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	cfg := providerBlock(h, "prod") + `resource "takoform_edge_kv_namespace" "cache" { name = "cache" }`
	imp := func(id string, re *regexp.Regexp) resource.TestStep {
		return resource.TestStep{Config: cfg, ResourceName: "takoform_edge_kv_namespace.cache", ImportState: true, ImportStateId: id, ExpectError: re}
	}
	repairID := `Use NAME, SPACE/NAME, or a JSON object {"space"?, "apiVersion", "kind", "definitionVersion", "schemaDigest", "name"}.`
	refusalCase(t,
		resource.TestStep{Config: cfg},
		imp("Cache", diagRE("Invalid import ID", "Code: takoform.provider/import-id", repairID)),
		imp(" prod/cache", diagRE("Invalid import ID", "Code: takoform.provider/import-id", repairID)),
		imp(`{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","name":"cache"}`,
			diagRE("Invalid import ID", "all four FormRef members", "Code: takoform.provider/import-id")),
		imp(`{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"0.2.0","schemaDigest":"sha256:`+strings.Repeat("0", 64)+`","name":"cache"}`,
			diagRE("This provider build has no codec for the FormRef to import", "EdgeKVNamespace 0.1.0",
				"Code: takoform.provider/unknown-form-ref",
				"Use a provider build that supports this FormRef, or import the resource under a FormRef this build knows.")),
		imp("elsewhere/cache", diagRE("Cannot import takoform_edge_kv_namespace", "Resource: takoform_edge_kv_namespace (elsewhere/cache)",
			"Code: resource_not_found (host, HTTP 404)")),
	)
}
