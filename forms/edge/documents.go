// Package edge is the Edge Platform Family edge.forms.takoform.com/v1alpha1
// (host API spec/host-api-v1alpha3.md §6.3–§6.5, §7): its generated documents and its semantic
// rules.
package edge

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/takoform/takoform/ijson"
)

// familyFiles holds the generated tree; regenerate with
// `go generate ./forms/edge` after editing forms/edge/source.
//
//go:embed family
var familyFiles embed.FS

// Family returns the generated documents rooted at the family directory:
//
//	family.json                              the index (see Index)
//	forms/<kebab-kind>/definition.json       Form Definitions (spec/host-api-v1alpha3.md §6.1)
//	forms/<kebab-kind>/fixtures/*.json       desired.json and negative-*.json
//	interfaces/<name>/definition.json        Interface Definitions (spec/host-api-v1alpha3.md §7.1)
//	bindings/<name>/definition.json          Binding Definitions (spec/host-api-v1alpha3.md §7.3)
//
// Fixture paths inside a Form Definition are relative to its directory.
func Family() fs.FS {
	sub, err := fs.Sub(familyFiles, "family")
	if err != nil {
		panic(err) // "family" is a valid, embedded directory
	}
	return sub
}

// FamilyIndex is family.json: every document of the family with the digest
// the generator computed (JCS + SHA-256, spec/host-api-v1alpha3.md §1.3). Slices keep index order.
type FamilyIndex struct {
	Family     string          `json:"family"`
	Forms      []FormEntry     `json:"forms"`
	Interfaces []ContractEntry `json:"interfaces"`
	Bindings   []ContractEntry `json:"bindings"`
}

// FormEntry is one Form: Path is its definition.json within Family().
type FormEntry struct {
	Kind    string       `json:"kind"`
	Role    string       `json:"role"`
	Path    string       `json:"path"`
	FormRef IndexFormRef `json:"formRef"`
}

// IndexFormRef is the exact FormRef {apiVersion, kind, definitionVersion,
// schemaDigest} of a Form (spec/host-api-v1alpha3.md §1.3).
type IndexFormRef struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	DefinitionVersion string `json:"definitionVersion"`
	SchemaDigest      string `json:"schemaDigest"`
}

// ContractEntry is one Interface or Binding: Path is its definition.json
// within Family(); SchemaDigest completes its exact ref (spec/host-api-v1alpha3.md §7.1, §7.3).
type ContractEntry struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Path         string `json:"path"`
	SchemaDigest string `json:"schemaDigest"`
}

// Index decodes family.json strictly (closed members, I-JSON). An error means
// the embedded tree is damaged; it is an *ijson.Error or wraps an fs error.
func Index() (FamilyIndex, error) {
	var idx FamilyIndex
	data, err := fs.ReadFile(Family(), "family.json")
	if err != nil {
		return idx, fmt.Errorf("edge family index: %w", err)
	}
	if err := ijson.Unmarshal(data, &idx); err != nil {
		return FamilyIndex{}, fmt.Errorf("edge family index: %w", err)
	}
	return idx, nil
}
