package host

import (
	"fmt"

	"github.com/takoform/takoform/form"
)

// ProbeSecondGroupRef is the declared FormRef of the conformance probe's
// second-group EdgeKVNamespace (spec/conformance-probe.md §5). No document
// hashes to its digest: the public corpus declares it as a label.
var ProbeSecondGroupRef = form.FormRef{
	APIVersion: "other.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "0.1.0",
	SchemaDigest: "sha256:6c0c743c4fcd5332da4b484b391d93ed6e93118a7773e254e1c7b0657557aefb",
}

// probeSecondGroupDocument is the Form spec/conformance-probe.md §5
// describes: role identity,
// capabilities create, read, delete, import, observe, a closed empty
// desired schema, and its title.
const probeSecondGroupDocument = `{"apiVersion":"other.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"0.1.0",` +
	`"title":"Synthetic second-group EdgeKVNamespace","role":"identity",` +
	`"desiredSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{}},` +
	`"lifecycleCapabilities":["create","read","delete","import","observe"]}`

// withProbeForms returns cat with the probe's second-group Form installed
// under its declared ref. host.New calls it only in probe mode, so a
// production host never serves a Form whose digest is not its bytes'
// (decision spec/decisions/0014-several-families-one-host.md).
func withProbeForms(cat *form.Catalog) (*form.Catalog, error) {
	def, err := form.ParseDeclared([]byte(probeSecondGroupDocument), ProbeSecondGroupRef.SchemaDigest)
	if err != nil {
		return nil, fmt.Errorf("the probe's second-group form: %w", err)
	}
	if _, ok := cat.Form(ProbeSecondGroupRef); ok {
		return cat, nil
	}
	return cat.AddForm(def, "")
}
