package provider

//go:generate go run ./internal/examplegen ../../examples

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// ExampleSpace is the space the import examples name (the provider block
// of examples/provider/provider.tf sets the same).
const ExampleSpace = "staging"

// exampleName finds the top-level `name = "…"` line of a resource block.
var exampleName = regexp.MustCompile(`(?m)^  name\s*=\s*"([^"]*)"`)

// ImportExamples renders the import examples of every type of reg, keyed
// by path under the examples directory: resources/<type>/import.sh (the
// three import ID forms: NAME, SPACE/NAME and the JSON object with the
// exact FormRef) and resources/<type>/import-by-identity.tf (the identity
// form), all for the resource labelled "example" in that type's
// resources/<type>/resource.tf (spec/host-api-v1alpha3.md §1.6). A
// revision type's example derives its name from content, so its import
// examples show a name of the derived shape. Errors: a type without an
// example, or an example without a resource labelled "example".
func ImportExamples(reg *Registry, examples fs.FS) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, tn := range reg.names() {
		t := reg.Types[tn]
		dir := path.Join("resources", tn)
		src, err := fs.ReadFile(examples, path.Join(dir, "resource.tf"))
		if err != nil {
			return nil, fmt.Errorf("type %s has no example: %w", tn, err)
		}
		start := strings.Index(string(src), fmt.Sprintf("resource %q \"example\" {\n", tn))
		if start < 0 {
			return nil, fmt.Errorf("%s/resource.tf has no resource %q \"example\"", dir, tn)
		}
		block := string(src)[start:]
		if end := strings.Index(block, "\n}\n"); end >= 0 {
			block = block[:end]
		}
		name := ""
		if m := exampleName.FindStringSubmatch(block); m != nil {
			name = m[1]
		}
		if name == "" {
			if !t.Revision {
				return nil, fmt.Errorf("%s/resource.tf: resource %q \"example\" sets no name", dir, tn)
			}
			name = t.NamePrefix + "-0123456789ab-cdef01234567" // the derived shape: prefix, content digest, owner digest
		}
		ref := t.DefaultCreate
		j, err := json.Marshal(map[string]string{"space": ExampleSpace, "apiVersion": ref.APIVersion, "kind": ref.Kind,
			"definitionVersion": ref.DefinitionVersion, "schemaDigest": ref.SchemaDigest, "name": name})
		if err != nil {
			return nil, err
		}
		addr := tn + ".example"
		out[path.Join(dir, "import.sh")] = []byte(fmt.Sprintf(`# NAME: the resource %[2]q in the provider's space.
tofu import %[1]s %[2]s

# SPACE/NAME (split at the first "/"; a SpaceID cannot contain one).
tofu import %[1]s '%[3]s/%[2]s'

# A JSON object naming the exact FormRef (its four members all or none):
# adopts a resource created under another definition this provider build
# supports. NAME and SPACE/NAME bind to the type's default create FormRef.
tofu import %[1]s '%[4]s'
`, addr, name, ExampleSpace, j))
		out[path.Join(dir, "import-by-identity.tf")] = []byte(fmt.Sprintf(`# Import by resource identity (OpenTofu 1.12, Terraform 1.12 and later).
import {
  to = %s
  identity = {
    space = %q
    name  = %q
  }
}
`, addr, ExampleSpace, name))
	}
	return out, nil
}
