// Package form is the generic Form machinery of Takoform: the exact FormRef,
// Interface and Binding references, Form Definition parsing and structural
// verification, the definition digest, desired-spec validation, top-level
// default materialisation, relation derivation and the installed set
// (Catalog). See spec/host-api-v1alpha3.md §1.3, §5.5, §5.6, §6.1, §7.
package form

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/takoform/takoform/ijson"
)

// Grammars of the contract names (spec/host-api-v1alpha3.md §7.1, §7.3); the
// identity members' grammars are in grammar.go.
var (
	interfaceNamePattern    = regexp.MustCompile(`^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9]*)*$`)
	bindingNamePattern      = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[.-][a-z][a-z0-9]*)*$`)
	maxAPIVersionLen        = 320
	maxContractNameLen      = 128
	frozenAPIVersions       = map[string]bool{"forms.takoform.com/v1alpha1": true, "forms.takoform.com/v1alpha2": true}
	interfaceRefAPIVersion  = "interfaces.takoform.com/v1alpha1"
	bindingRefAPIVersion    = "bindings.takoform.com/v1alpha1"
	interfaceDefinitionKind = "InterfaceDefinition"
	bindingDefinitionKind   = "BindingDefinition"
)

// FormRef is the exact identity of one Form Definition (spec/host-api-v1alpha3.md §1.3). It is
// comparable and is the whole key of the installed set; a package digest is
// never part of it.
type FormRef struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	DefinitionVersion string `json:"definitionVersion"`
	SchemaDigest      string `json:"schemaDigest"`
}

// String renders the ref as "<apiVersion> <kind> <definitionVersion> <schemaDigest>",
// the form diagnostics print.
func (r FormRef) String() string {
	return fmt.Sprintf("%s %s %s %s", r.APIVersion, r.Kind, r.DefinitionVersion, r.SchemaDigest)
}

// Validate checks each member's grammar (spec/host-api-v1alpha3.md §1.3) and returns a
// *RefError naming the first member that is wrong, or nil.
func (r FormRef) Validate() error {
	if err := ValidateAPIVersion(r.APIVersion); err != nil {
		return err
	}
	if !matchKind(r.Kind) {
		return &RefError{Member: "kind", Value: r.Kind, Want: "PascalCase ^[A-Z][A-Za-z0-9]{0,63}$, e.g. WorkerVersion"}
	}
	if !matchSemver(r.DefinitionVersion) {
		return &RefError{Member: "definitionVersion", Value: r.DefinitionVersion, Want: "a SemVer 2.0.0 version, e.g. 0.1.0"}
	}
	if !ijson.ValidDigest(r.SchemaDigest) {
		return &RefError{Member: "schemaDigest", Value: r.SchemaDigest, Want: "sha256: followed by 64 lowercase hex digits"}
	}
	return nil
}

// ValidateAPIVersion checks a Form group + version such as
// "edge.forms.takoform.com/v1alpha1" (spec/host-api-v1alpha3.md §1.3); the frozen
// forms.takoform.com/v1alpha1 and /v1alpha2 epochs are refused.
func ValidateAPIVersion(s string) error {
	if len(s) > maxAPIVersionLen || !matchAPIVersion(s) {
		return &RefError{Member: "apiVersion", Value: s, Want: "a DNS-like group of two or more labels and a version, e.g. edge.forms.takoform.com/v1alpha1"}
	}
	if frozenAPIVersions[s] {
		return &RefError{Member: "apiVersion", Value: s, Want: "a group other than the frozen forms.takoform.com/v1alpha1 and v1alpha2 epochs"}
	}
	return nil
}

// ValidateKind checks the PascalCase Form kind grammar.
func ValidateKind(s string) error {
	if !matchKind(s) {
		return &RefError{Member: "kind", Value: s, Want: "PascalCase ^[A-Z][A-Za-z0-9]{0,63}$"}
	}
	return nil
}

// ValidateName checks a resource metadata.name, also the name member of a
// relation: ^[a-z][a-z0-9-]{0,62}$ (spec/host-api-v1alpha3.md §1.2). It is not a SpaceID rule.
func ValidateName(s string) error {
	if !matchResourceName(s) {
		return &RefError{Member: "name", Value: s, Want: "1-63 characters: a lowercase letter, then lowercase letters, digits or hyphens"}
	}
	return nil
}

// InterfaceRef is the exact identity of an Interface Definition (spec/host-api-v1alpha3.md §7.1).
type InterfaceRef struct {
	APIVersion   string `json:"apiVersion"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	SchemaDigest string `json:"schemaDigest"`
}

// String renders "name@version (digest)".
func (r InterfaceRef) String() string { return r.Name + "@" + r.Version + " (" + r.SchemaDigest + ")" }

// Validate checks the InterfaceRef grammar; errors are *RefError.
func (r InterfaceRef) Validate() error {
	return validateContractRef(r.APIVersion, interfaceRefAPIVersion, r.Name, interfaceNamePattern, r.Version, r.SchemaDigest)
}

// BindingRef is the exact identity of a Binding Definition (spec/host-api-v1alpha3.md §7.3).
type BindingRef struct {
	APIVersion   string `json:"apiVersion"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	SchemaDigest string `json:"schemaDigest"`
}

// String renders "name@version (digest)".
func (r BindingRef) String() string { return r.Name + "@" + r.Version + " (" + r.SchemaDigest + ")" }

// Validate checks the BindingRef grammar; errors are *RefError.
func (r BindingRef) Validate() error {
	return validateContractRef(r.APIVersion, bindingRefAPIVersion, r.Name, bindingNamePattern, r.Version, r.SchemaDigest)
}

func validateContractRef(apiVersion, wantAPI, name string, namePattern *regexp.Regexp, version, digest string) error {
	if apiVersion != wantAPI {
		return &RefError{Member: "apiVersion", Value: apiVersion, Want: wantAPI}
	}
	if len(name) > maxContractNameLen || !namePattern.MatchString(name) {
		return &RefError{Member: "name", Value: name, Want: "dot-separated lowercase words matching " + namePattern.String()}
	}
	if !matchStrictVersion(version) {
		return &RefError{Member: "version", Value: version, Want: "MAJOR.MINOR.PATCH, e.g. 1.0.0"}
	}
	if !ijson.ValidDigest(digest) {
		return &RefError{Member: "schemaDigest", Value: digest, Want: "sha256: followed by 64 lowercase hex digits"}
	}
	return nil
}

// RefError is an identity member that breaks its grammar.
type RefError struct {
	Member string // JSON member name, e.g. "definitionVersion"
	Value  string
	Want   string
}

func (e *RefError) Error() string {
	v := e.Value
	if v == "" {
		return fmt.Sprintf("%s is empty; want %s", e.Member, e.Want)
	}
	return fmt.Sprintf("%s %q is invalid; want %s", e.Member, strings.ToValidUTF8(v, "\uFFFD"), e.Want)
}
