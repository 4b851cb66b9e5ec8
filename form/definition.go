package form

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/takoform/takoform/ijson"
)

// Role is a Form's closed lifecycle role (spec/host-api-v1alpha3.md §6.1).
type Role string

// The five roles.
const (
	RoleIdentity   Role = "identity"
	RoleRevision   Role = "revision"
	RoleDeployment Role = "deployment"
	RoleAttachment Role = "attachment"
	RolePolicy     Role = "policy"
)

// Capability is a lifecycle capability (spec/host-api-v1alpha3.md §6.1).
type Capability string

// Lifecycle capabilities; v1alpha3 Forms never use CapRefresh.
const (
	CapCreate  Capability = "create"
	CapRead    Capability = "read"
	CapUpdate  Capability = "update"
	CapDelete  Capability = "delete"
	CapImport  Capability = "import"
	CapObserve Capability = "observe"
	CapRefresh Capability = "refresh"
)

// Fixture names a canonical conformance fixture, paths relative to the
// definition's directory.
type Fixture struct {
	Name         string `json:"name"`
	DesiredPath  string `json:"desiredPath"`
	ObservedPath string `json:"observedPath,omitempty"`
	OutputPath   string `json:"outputPath,omitempty"`
}

// NegativeFixture names a document the Form must refuse at Stage.
type NegativeFixture struct {
	Name            string `json:"name"`
	Stage           string `json:"stage"`
	InputPath       string `json:"inputPath"`
	ExpectedFailure string `json:"expectedFailure"`
}

// document is the closed wire shape of a Form Definition
// (form-definition v1alpha3, spec/host-api-v1alpha3.md §6.1).
type document struct {
	APIVersion                  string            `json:"apiVersion"`
	Kind                        string            `json:"kind"`
	DefinitionVersion           string            `json:"definitionVersion"`
	Title                       *string           `json:"title"`
	Description                 *string           `json:"description"`
	Role                        Role              `json:"role"`
	DesiredSchema               json.RawMessage   `json:"desiredSchema"`
	ObservedSchema              json.RawMessage   `json:"observedSchema"`
	OutputSchema                json.RawMessage   `json:"outputSchema"`
	ImmutableFields             []string          `json:"immutableFields"`
	LifecycleCapabilities       []Capability      `json:"lifecycleCapabilities"`
	ProvidedInterfaces          []InterfaceRef    `json:"providedInterfaces"`
	AcceptedBindings            []BindingRef      `json:"acceptedBindings"`
	ConformanceFixtures         []Fixture         `json:"conformanceFixtures"`
	NegativeConformanceFixtures []NegativeFixture `json:"negativeConformanceFixtures"`
}

// Definition is one parsed and verified Form Definition. It is immutable
// after Parse and safe for concurrent use; its desired schema is compiled
// once, at Parse.
type Definition struct {
	doc         document
	raw         []byte
	ref         FormRef
	desired     map[string]any
	output      map[string]any
	schema      *jsonschema.Schema
	outSchema   *jsonschema.Schema
	defaults    map[string]any
	relations   []Relation
	immutable   map[string]bool
	caps        map[Capability]bool
	mutableAny  bool
	outputNames []string
}

// Parse strictly decodes a Form Definition document, computes its schema
// digest (JCS + SHA-256 of the whole document, spec/host-api-v1alpha3.md §1.3), verifies its
// structure (spec/host-api-v1alpha3.md §6.1, §5.3, §5.5), compiles its desired schema (Draft
// 2020-12) and derives its relations. The error is an *ijson.Error for
// undecodable JSON or a *DefinitionError listing every problem found.
func Parse(data []byte) (*Definition, error) { return parse(data, "") }

// parse is Parse with the document's recorded digest ("" computes it;
// LoadFamilyDigested).
func parse(data []byte, digest string) (*Definition, error) {
	var doc document
	if err := ijson.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	digest, err := digestOf(data, digest)
	if err != nil {
		return nil, err
	}
	d := &Definition{
		doc: doc,
		raw: append([]byte(nil), data...),
		ref: FormRef{APIVersion: doc.APIVersion, Kind: doc.Kind, DefinitionVersion: doc.DefinitionVersion, SchemaDigest: digest},
	}
	v := &verifier{}
	d.verify(v)
	if len(v.problems) > 0 {
		return nil, v.err(d.ref)
	}
	return d, nil
}

// Ref is the definition's exact FormRef, digest included.
func (d *Definition) Ref() FormRef { return d.ref }

// Raw is the document bytes as parsed (the digest covers their JCS form).
func (d *Definition) Raw() []byte { return d.raw }

// Title is the definition's title.
func (d *Definition) Title() string { return deref(d.doc.Title) }

// Description is the definition's description ("" when absent).
func (d *Definition) Description() string { return deref(d.doc.Description) }

// Role is the Form's lifecycle role.
func (d *Definition) Role() Role { return d.doc.Role }

// DesiredSchemaJSON is the desiredSchema member exactly as the document
// carries it; a host serves these bytes (spec/host-api-v1alpha3.md §3.4 (2)).
func (d *Definition) DesiredSchemaJSON() json.RawMessage { return d.doc.DesiredSchema }

// DesiredSchema is the decoded desiredSchema (do not modify).
func (d *Definition) DesiredSchema() map[string]any { return d.desired }

// OutputSchemaJSON is the outputSchema member, nil when the Form declares
// no outputs (spec/host-api-v1alpha3.md §5.3).
func (d *Definition) OutputSchemaJSON() json.RawMessage { return d.doc.OutputSchema }

// OutputNames lists the declared output members, sorted; nil without outputs.
func (d *Definition) OutputNames() []string { return d.outputNames }

// Capabilities lists the lifecycle capabilities in document order.
func (d *Definition) Capabilities() []Capability {
	return append([]Capability(nil), d.doc.LifecycleCapabilities...)
}

// Has reports whether the Form declares capability c.
func (d *Definition) Has(c Capability) bool { return d.caps[c] }

// ImmutableFields lists the immutable JSON pointers in document order.
func (d *Definition) ImmutableFields() []string {
	return append([]string(nil), d.doc.ImmutableFields...)
}

// IsImmutable reports whether the top-level desired field named name
// ("/name" pointer) is immutable.
func (d *Definition) IsImmutable(field string) bool { return d.immutable[pointerTo("", field)] }

// ProvidedInterfaces lists the exact Interfaces every resource provides.
func (d *Definition) ProvidedInterfaces() []InterfaceRef {
	return append([]InterfaceRef(nil), d.doc.ProvidedInterfaces...)
}

// AcceptedBindings lists the exact Binding contracts the Form may hold.
func (d *Definition) AcceptedBindings() []BindingRef {
	return append([]BindingRef(nil), d.doc.AcceptedBindings...)
}

// Fixtures lists the canonical conformance fixtures.
func (d *Definition) Fixtures() []Fixture {
	return append([]Fixture(nil), d.doc.ConformanceFixtures...)
}

// NegativeFixtures lists the negative conformance fixtures.
func (d *Definition) NegativeFixtures() []NegativeFixture {
	return append([]NegativeFixture(nil), d.doc.NegativeConformanceFixtures...)
}

// Relations lists the relations derived from the desired schema, sorted by
// pointer (spec/host-api-v1alpha3.md §5.5).
func (d *Definition) Relations() []Relation { return append([]Relation(nil), d.relations...) }

// Properties lists the desired schema's top-level property names, sorted.
func (d *Definition) Properties() []string {
	props, _ := d.desired["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefinitionError lists every structural problem of one definition.
type DefinitionError struct {
	Ref      FormRef // as far as the document states it; SchemaDigest computed
	Problems []Problem
}

// Problem is one structural fault: the JSON pointer into the definition
// document and what is wrong with it.
type Problem struct {
	Pointer string
	Message string
}

func (e *DefinitionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "form definition %s %s %s is not valid:", e.Ref.APIVersion, e.Ref.Kind, e.Ref.DefinitionVersion)
	for _, p := range e.Problems {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "(document)"
		}
		fmt.Fprintf(&b, "\n  %s: %s", ptr, p.Message)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pointerTo is the JSON pointer at followed by tokens, each escaped
// (RFC 6901 §3, by jsontext.Pointer).
func pointerTo(at string, tokens ...string) string {
	p := jsontext.Pointer(at)
	for _, t := range tokens {
		p = p.AppendToken(t)
	}
	return string(p)
}
