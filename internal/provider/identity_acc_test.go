package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccImportIdentity: every resource records its identity (space, the
// four FormRef members, name) and can be imported with OpenTofu 1.12's
// `import { identity = {…} }` — the full identity, or only its name (the
// provider's space and the type's default create ref fill the rest, and
// the planned identity is the full one). An identity the build cannot
// decode is refused with the accepted forms, never re-bound: a FormRef the
// type has no codec for (naming the refs it supports), FormRef members
// given partly, an invalid space.
func TestAccImportIdentity(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	ref := edgeRef(t, "EdgeKVNamespace")
	const addr = "takoform_edge_kv_namespace.cache"
	cfg := providerBlock(h, "prod") + `resource "takoform_edge_kv_namespace" "cache" { name = "cache" }`
	byIdentity := func(members string, re *regexp.Regexp) resource.TestStep {
		return resource.TestStep{Config: cfg + `
import {
  to       = ` + addr + `
  identity = {
` + members + `
  }
}
`, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportStateConfigExact: true, ExpectError: re}
	}
	full := func(digest string) string {
		return `    space = "prod"
    api_version = "` + ref.APIVersion + `"
    kind = "EdgeKVNamespace"
    definition_version = "` + ref.DefinitionVersion + `"
    schema_digest = "` + digest + `"
    name = "cache"`
	}
	repair := "Use an import identity {space (optional), name, and api_version, kind, definition_version, schema_digest all four or none} naming a FormRef this build supports."
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(addr, map[string]knownvalue.Check{
				"space": knownvalue.StringExact("prod"), "api_version": knownvalue.StringExact(ref.APIVersion), "kind": knownvalue.StringExact("EdgeKVNamespace"),
				"definition_version": knownvalue.StringExact(ref.DefinitionVersion), "schema_digest": knownvalue.StringExact(ref.SchemaDigest),
				"name": knownvalue.StringExact("cache"),
			})}},
			{Config: cfg, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity},
			byIdentity(full(ref.SchemaDigest), nil),
			byIdentity(`    name = "cache"`, nil),
			byIdentity(full("sha256:"+strings.Repeat("0", 64)), diagRE("This provider build has no codec for the FormRef to import",
				"takoform_edge_kv_namespace supports "+ref.String(), "Code: takoform.provider/unknown-form-ref",
				"Use a provider build that supports this FormRef, or import the resource under a FormRef this build knows.")),
			byIdentity(`    api_version = "`+ref.APIVersion+`"
    kind = "EdgeKVNamespace"
    name = "cache"`, diagRE("Invalid import identity", "all four FormRef members", "Code: takoform.provider/import-identity", repair)),
			byIdentity(`    space = " prod"
    name = "cache"`, diagRE("Invalid import identity", "Code: takoform.provider/import-identity", repair)),
		},
	})
}
