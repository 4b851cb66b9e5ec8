// Package edge is the Edge Platform Family in both its groups: its
// generated documents and its semantic rules. edge.forms.takoform.com/v1alpha1
// (host API spec/host-api-v1alpha3.md §6.3–§6.5, §7) is served on lane
// v1alpha3; edge.forms.takoform.com/v1beta1 (spec/lane-v1beta1.md §6.3–§6.7,
// §7) on lane v1beta1. Both are generated from one source
// (forms/edge/source); the rules apply within each group and the two
// families never relate to each other (repo decision 0054).
package edge

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/takoform/takoform/ijson"
)

// familyFiles holds the generated trees; regenerate with
// `go generate ./forms/edge` after editing forms/edge/source.
//
//go:embed family family-v1beta1
var familyFiles embed.FS

// Family returns the generated documents of edge.forms.takoform.com/v1alpha1
// rooted at its family directory:
//
//	family.json                              the index (see Index)
//	forms/<kebab-kind>/definition.json       Form Definitions (spec/host-api-v1alpha3.md §6.1)
//	forms/<kebab-kind>/fixtures/*.json       desired.json and negative-*.json
//	interfaces/<name>/definition.json        Interface Definitions (spec/host-api-v1alpha3.md §7.1)
//	bindings/<name>/definition.json          Binding Definitions (spec/host-api-v1alpha3.md §7.3)
//
// Fixture paths inside a Form Definition are relative to its directory.
func Family() fs.FS { return tree("family") }

// FamilyV1beta1 returns the generated documents of
// edge.forms.takoform.com/v1beta1 (spec/lane-v1beta1.md §6.3–§6.7, §7; 15
// Forms, 6 Interfaces, 5 Bindings), laid out as Family. Its Interfaces and
// Bindings share name@version with Family's but not their bytes, so the two
// trees belong to different lanes and are never installed as one set
// (spec/lane-v1beta1.md §2.5).
func FamilyV1beta1() fs.FS { return tree("family-v1beta1") }

// FamilyOf returns the generated tree of the Edge group, or false for any
// other group.
func FamilyOf(group string) (fs.FS, bool) {
	switch group {
	case GroupV1alpha1:
		return Family(), true
	case GroupV1beta1:
		return FamilyV1beta1(), true
	}
	return nil, false
}

func tree(dir string) fs.FS {
	sub, err := fs.Sub(familyFiles, dir)
	if err != nil {
		panic(err) // dir is a valid, embedded directory
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

// Index decodes Family's family.json strictly (closed members, I-JSON). An
// error means the embedded tree is damaged; it is an *ijson.Error or wraps
// an fs error.
func Index() (FamilyIndex, error) { return IndexOf(Family()) }

// IndexV1beta1 decodes FamilyV1beta1's family.json, as Index.
func IndexV1beta1() (FamilyIndex, error) { return IndexOf(FamilyV1beta1()) }

// IndexOf decodes the family.json of a tree returned by Family,
// FamilyV1beta1 or FamilyOf, as Index.
func IndexOf(family fs.FS) (FamilyIndex, error) {
	var idx FamilyIndex
	data, err := fs.ReadFile(family, "family.json")
	if err != nil {
		return idx, fmt.Errorf("edge family index: %w", err)
	}
	if err := ijson.Unmarshal(data, &idx); err != nil {
		return FamilyIndex{}, fmt.Errorf("edge family index: %w", err)
	}
	return idx, nil
}
