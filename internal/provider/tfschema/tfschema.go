// Package tfschema is the provider's own description of one resource or
// data-source schema (repo decision 0069, ARCHITECTURE.md §3.1 D28): an
// attribute tree — each attribute's kind, required, optional and
// computed flags, sensitivity, plain and Markdown descriptions,
// deprecation, static default and plan modifiers — built once per type
// from the Form's field mapping (internal/provider schema.go). The
// schema the provider serves (Proto), the Terraform value type it
// decodes with (Type) and its plan rules are read from this tree alone;
// the package never imports terraform-plugin-framework, whose schemas
// are derived from the same tree only for the framework adapters that
// are the oracle of the differential tests.
package tfschema

import (
	"sort"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Kind is an attribute's value kind.
type Kind int

// The attribute kinds the provider's schemas use.
const (
	String       Kind = iota + 1 // a string
	Int64                        // a number holding a 64-bit integer
	Float64                      // a number holding a 64-bit float
	Bool                         // a bool
	StringSet                    // a set of strings
	StringList                   // a list of strings
	ListNested                   // a list of objects of the Nested attributes
	SingleNested                 // one object of the Nested attributes
)

// Mod is an attribute plan modifier.
type Mod int

// The plan modifiers (terraform-plugin-framework's UseStateForUnknown and
// RequiresReplace, as internal/provider planrules.go reproduces them).
const (
	UseStateForUnknown Mod = iota + 1
	RequiresReplace
)

// Attr is one attribute. A Description is served as plain text unless a
// MarkdownDescription is set, which is then served instead (as
// terraform-plugin-framework v1.19's toproto6 does).
type Attr struct {
	Kind                                    Kind
	Required, Optional, Computed, Sensitive bool
	Description, MarkdownDescription        string
	Deprecation                             string         // a deprecation message, or ""
	Default                                 *tftypes.Value // a static default of Type(), or nil
	Mods                                    []Mod          // in declared order
	Nested                                  map[string]*Attr
}

// Schema is one type's schema: its version (the state layout's, 0 for a
// data source), descriptions and top-level attributes.
type Schema struct {
	Version                          int64
	Description, MarkdownDescription string
	Attrs                            map[string]*Attr
}

// Type is the attribute's Terraform type: numbers for Int64 and Float64,
// a list or set of strings, a list of objects or one object.
func (a *Attr) Type() tftypes.Type {
	switch a.Kind {
	case Int64, Float64:
		return tftypes.Number
	case Bool:
		return tftypes.Bool
	case StringSet:
		return tftypes.Set{ElementType: tftypes.String}
	case StringList:
		return tftypes.List{ElementType: tftypes.String}
	case ListNested:
		return tftypes.List{ElementType: ObjectOf(a.Nested)}
	case SingleNested:
		return ObjectOf(a.Nested)
	}
	return tftypes.String
}

// ObjectOf is the object type of attrs.
func ObjectOf(attrs map[string]*Attr) tftypes.Object {
	m := make(map[string]tftypes.Type, len(attrs))
	for n, a := range attrs {
		m[n] = a.Type()
	}
	return tftypes.Object{AttributeTypes: m}
}

// Type is the schema's Terraform object type, the type of its values.
func (s *Schema) Type() tftypes.Object {
	return ObjectOf(s.Attrs)
}

// Proto is the schema as protocol 6 states it: attributes sorted by name,
// nested ones as a nested object (list or single) with no Type, no
// blocks; exactly what terraform-plugin-framework v1.19 answers for the
// framework schema of the same tree (toproto6.Schema).
func (s *Schema) Proto() *tfprotov6.Schema {
	b := &tfprotov6.SchemaBlock{Attributes: protoAttrs(s.Attrs)}
	b.Description, b.DescriptionKind = describe(s.Description, s.MarkdownDescription)
	return &tfprotov6.Schema{Version: s.Version, Block: b}
}

func protoAttrs(attrs map[string]*Attr) []*tfprotov6.SchemaAttribute {
	out := make([]*tfprotov6.SchemaAttribute, 0, len(attrs))
	for name, a := range attrs {
		out = append(out, protoAttr(name, a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func protoAttr(name string, a *Attr) *tfprotov6.SchemaAttribute {
	p := &tfprotov6.SchemaAttribute{Name: name, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive,
		Deprecated: a.Deprecation != "", DeprecationMessage: a.Deprecation}
	p.Description, p.DescriptionKind = describe(a.Description, a.MarkdownDescription)
	switch a.Kind {
	case ListNested:
		p.NestedType = &tfprotov6.SchemaObject{Nesting: tfprotov6.SchemaObjectNestingModeList, Attributes: protoAttrs(a.Nested)}
	case SingleNested:
		p.NestedType = &tfprotov6.SchemaObject{Nesting: tfprotov6.SchemaObjectNestingModeSingle, Attributes: protoAttrs(a.Nested)}
	default:
		p.Type = a.Type()
	}
	return p
}

// describe is the description served and its kind: the Markdown one
// when set, else the plain one when set, else none.
func describe(plain, md string) (string, tfprotov6.StringKind) {
	switch {
	case md != "":
		return md, tfprotov6.StringKindMarkdown
	case plain != "":
		return plain, tfprotov6.StringKindPlain
	}
	return "", tfprotov6.StringKindPlain
}
