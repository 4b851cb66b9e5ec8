package provider

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/provider/tfschema"
)

// conditionAttrs are the members of one conditions element.
var conditionAttrs = []string{"type", "status", "reason", "message", "host_reason", "observed_generation", "last_transition_time"}

// buildSchema is a type's schema, as the provider's own attribute tree
// (repo decision 0069): the envelope, one attribute per desired field of
// the default create definition, one per declared output, and the
// per-kind exceptions. The served schema, the value type and the plan
// rules are read from it; the framework's schema is derived from it
// (frameworkSchema).
func buildSchema(t *TypeSpec) *tfschema.Schema {
	keep := []tfschema.Mod{tfschema.UseStateForUnknown}
	replace := []tfschema.Mod{tfschema.RequiresReplace}
	str := func(a tfschema.Attr) *tfschema.Attr { a.Kind = tfschema.String; return &a }
	attrs := map[string]*tfschema.Attr{
		attrName:              str(tfschema.Attr{Required: !t.Revision, Optional: t.Revision, Computed: t.Revision, Mods: replace}),
		attrSpace:             str(tfschema.Attr{Optional: true, Computed: true, Mods: replace}),
		attrCreateTimeout:     str(tfschema.Attr{Optional: true}),
		attrDeleteTimeout:     str(tfschema.Attr{Optional: true}),
		attrUID:               str(tfschema.Attr{Computed: true, Mods: keep}),
		attrGeneration:        str(tfschema.Attr{Computed: true}),
		attrRevision:          str(tfschema.Attr{Computed: true}),
		attrConditions:        {Kind: tfschema.ListNested, Computed: true, Nested: stringAttrs(conditionAttrs)},
		attrReady:             {Kind: tfschema.Bool, Computed: true},
		attrOutputsJSON:       str(tfschema.Attr{Computed: true}),
		attrAPIVersion:        str(tfschema.Attr{Computed: true, Mods: keep}),
		attrKind:              str(tfschema.Attr{Computed: true, Mods: keep}),
		attrDefinitionVersion: str(tfschema.Attr{Computed: true, Mods: keep}),
		attrSchemaDigest:      str(tfschema.Attr{Computed: true, Mods: keep}),
		attrPackageDigest:     str(tfschema.Attr{Computed: true, Mods: keep}),
		attrDriftReason:       str(tfschema.Attr{Computed: true}),
		attrPendingOperation:  str(tfschema.Attr{Computed: true}),
	}
	if t.HasUpdate {
		attrs[attrUpdateTimeout] = str(tfschema.Attr{Optional: true})
	}
	if t.Revision {
		attrs[attrRevisionOwner] = str(tfschema.Attr{Optional: true})
	}
	for _, f := range t.SchemaFields {
		attrs[f.Attr] = fieldAttribute(f, (t.LocalModules || t.FilesKind != "") && f.Member == "manifestDigest")
	}
	for _, o := range t.Create.Outputs {
		attrs[snake(o)] = outputAttribute(t.Create, o)
	}
	if t.LocalModules {
		attrs["main_module"] = str(tfschema.Attr{Optional: true, Computed: true, Description: "Name of the module the bundle runs (local authoring); import reads it from the committed manifest."})
		attrs["modules"] = &tfschema.Attr{Kind: tfschema.ListNested, Optional: true, Computed: true, Description: "Local module files uploaded as the bundle; paths stay in state, bytes never do. Import reads the modules from the committed manifest (content_file null); files hashing to those digests then plan no change.",
			Nested: map[string]*tfschema.Attr{
				"name":         str(tfschema.Attr{Required: true, Description: "Module name inside the bundle."}),
				"content_file": str(tfschema.Attr{Optional: true, Description: "Local file holding the module; required to author a bundle, null after import."}),
				"content_type": str(tfschema.Attr{Optional: true, Description: "Media type; derived from the name when omitted."}),
				"digest":       str(tfschema.Attr{Computed: true, Description: "sha256 of the file, computed by the provider."}),
				"size":         {Kind: tfschema.Int64, Computed: true, Description: "Size of the file in bytes."},
			}}
	}
	if t.FilesKind != "" {
		attrs["files"] = filesAttribute(t.FilesKind)
	}
	describeResource(attrs, "", t.Revision)
	md := resourceDoc(t)
	return &tfschema.Schema{Version: t.Lineage.Version, Attrs: attrs, Description: plain(md), MarkdownDescription: md}
}

func stringAttrs(names []string) map[string]*tfschema.Attr {
	m := map[string]*tfschema.Attr{}
	for _, n := range names {
		m[n] = &tfschema.Attr{Kind: tfschema.String, Computed: true}
	}
	return m
}

// fieldAttribute maps one field: Required → R; a declared default → OC
// with the default materialised; else O. Immutable fields replace. This
// is the one mapping of field kinds (fields.go) onto attributes: each
// kind's attribute kind and the form its declared default takes — a JSON
// field's canonical text, a string, a whole integer, a number, a bool, or
// the empty collection of a collection field declaring []; a default that
// does not convert to the attribute's type is none.
func fieldAttribute(f Field, optionalComputed bool) *tfschema.Attr {
	req := f.Required && !optionalComputed
	a := &tfschema.Attr{Required: req, Optional: !req, Computed: f.HasDefault || optionalComputed, Description: fieldDoc(f)}
	def := f.Default
	switch f.Kind {
	case KindString, KindRelation:
		a.Kind = tfschema.String
	case KindJSON:
		a.Kind, def = tfschema.String, nil
		if f.HasDefault {
			def = canonicalText(f.Default)
		}
	case KindInt64:
		a.Kind, def = tfschema.Int64, numberDefault(f.Default, json.Number.Int64)
	case KindNumber:
		a.Kind, def = tfschema.Float64, numberDefault(f.Default, json.Number.Float64)
	case KindBool:
		a.Kind = tfschema.Bool
	case KindStringSet, KindStringList:
		a.Kind, def = tfschema.StringList, emptyDefault(f.Default)
		if f.Kind == KindStringSet {
			a.Kind = tfschema.StringSet
		}
	case KindObject:
		a.Kind, a.Nested, def = tfschema.SingleNested, nestedAttributes(f), nil
	case KindBindingList, KindObjectList:
		a.Kind, a.Nested, def = tfschema.ListNested, nestedAttributes(f), emptyDefault(f.Default)
	default:
		return &tfschema.Attr{Kind: tfschema.String, Optional: true, Description: a.Description}
	}
	if f.Immutable {
		a.Mods = []tfschema.Mod{tfschema.RequiresReplace}
	}
	if f.HasDefault && def != nil && tftypes.ValidateValue(a.Type(), def) == nil {
		v := tftypes.NewValue(a.Type(), def)
		a.Default = &v
	}
	return a
}

// numberDefault is a declared number default read by conv
// (json.Number.Int64, json.Number.Float64); nil when it does not convert.
func numberDefault[T any](d any, conv func(json.Number) (T, error)) any {
	n, ok := d.(json.Number)
	if !ok {
		return nil
	}
	v, err := conv(n)
	if err != nil {
		return nil
	}
	return v
}

// emptyDefault is the empty collection of a declared default [] (the
// only collection default a field maps); nil for any other.
func emptyDefault(d any) any {
	if l, ok := d.([]any); !ok || len(l) != 0 {
		return nil
	}
	return []tftypes.Value{}
}

// nestedAttributes are the attributes of one element of a binding or
// object list, or of a single object.
func nestedAttributes(f Field) map[string]*tfschema.Attr {
	if f.Kind == KindBindingList {
		return map[string]*tfschema.Attr{
			"name":        {Kind: tfschema.String, Required: true, Description: "Binding name (a JavaScript identifier)."},
			"target_name": {Kind: tfschema.String, Required: true, Description: "Name of the bound " + f.Target + "."},
		}
	}
	nested := map[string]*tfschema.Attr{}
	for _, n := range f.Nested {
		nested[n.Attr] = fieldAttribute(Field{Member: n.Member, Attr: n.Attr, Kind: n.Kind, Required: n.Required, Target: n.Target, TargetAPI: n.TargetAPI, Nested: n.Nested, Doc: n.Doc}, false)
	}
	return nested
}

// outputAttribute is a plain Computed attribute typed by the output schema.
func outputAttribute(c *Codec, name string) *tfschema.Attr {
	doc, err := decodeRaw(c.Def.OutputSchemaJSON())
	if err != nil {
		// form.Definition parsed this schema to name the outputs
		panic(fmt.Sprintf("provider: the output schema of %s, which declares %s, does not decode: %v", c.Ref, name, err))
	}
	node := mapOf(mapOf(mapOf(doc)["properties"])[name])
	desc := str(node, "description")
	if desc == "" {
		desc = "Declared output `" + name + "` of the Form."
	}
	a := &tfschema.Attr{Kind: tfschema.String, Computed: true, Description: desc}
	switch {
	case hasType(node, "integer"):
		a.Kind = tfschema.Int64
	case hasType(node, "number"):
		a.Kind = tfschema.Float64
	case hasType(node, "boolean"):
		a.Kind = tfschema.Bool
	}
	return a
}

// decodeRaw decodes the JSON text b keeping exact numbers (json.Number);
// nil for an empty b (an omitted member).
func decodeRaw(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
