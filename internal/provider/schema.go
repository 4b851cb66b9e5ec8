package provider

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// conditionAttrs are the members of one conditions element.
var conditionAttrs = []string{"type", "status", "reason", "message", "host_reason", "observed_generation", "last_transition_time"}

// buildSchema is a type's schema: the envelope, one attribute per desired
// field of the default create definition, one per declared output, and
// the per-kind exceptions.
func buildSchema(t *TypeSpec) schema.Schema {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	attrs := map[string]schema.Attribute{
		attrName:          schema.StringAttribute{Required: !t.Revision, Optional: t.Revision, Computed: t.Revision, PlanModifiers: replace},
		attrSpace:         schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace},
		attrCreateTimeout: schema.StringAttribute{Optional: true},
		attrDeleteTimeout: schema.StringAttribute{Optional: true},
		attrUID:           schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrGeneration:    schema.StringAttribute{Computed: true},
		attrRevision:      schema.StringAttribute{Computed: true},
		attrConditions: schema.ListNestedAttribute{Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: stringAttrs(conditionAttrs)}},
		attrReady:             schema.BoolAttribute{Computed: true},
		attrOutputsJSON:       schema.StringAttribute{Computed: true},
		attrAPIVersion:        schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrKind:              schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrDefinitionVersion: schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrSchemaDigest:      schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrPackageDigest:     schema.StringAttribute{Computed: true, PlanModifiers: keep},
		attrDriftReason:       schema.StringAttribute{Computed: true},
		attrPendingOperation:  schema.StringAttribute{Computed: true},
	}
	if t.HasUpdate {
		attrs[attrUpdateTimeout] = schema.StringAttribute{Optional: true}
	}
	if t.Revision {
		attrs[attrRevisionOwner] = schema.StringAttribute{Optional: true}
	}
	for _, f := range t.SchemaFields {
		attrs[f.Attr] = fieldAttribute(f, (t.LocalModules || t.FilesKind != "") && f.Member == "manifestDigest")
	}
	for _, o := range t.Create.Outputs {
		attrs[snake(o)] = outputAttribute(t.Create, o)
	}
	if t.LocalModules {
		attrs["main_module"] = schema.StringAttribute{Optional: true, Computed: true, Description: "Name of the module the bundle runs (local authoring); import reads it from the committed manifest."}
		attrs["modules"] = schema.ListNestedAttribute{Optional: true, Computed: true, Description: "Local module files uploaded as the bundle; paths stay in state, bytes never do. Import reads the modules from the committed manifest (content_file null); files hashing to those digests then plan no change.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":         schema.StringAttribute{Required: true, Description: "Module name inside the bundle."},
				"content_file": schema.StringAttribute{Optional: true, Description: "Local file holding the module; required to author a bundle, null after import."},
				"content_type": schema.StringAttribute{Optional: true, Description: "Media type; derived from the name when omitted."},
				"digest":       schema.StringAttribute{Computed: true, Description: "sha256 of the file, computed by the provider."},
				"size":         schema.Int64Attribute{Computed: true, Description: "Size of the file in bytes."},
			}}}
	}
	if t.FilesKind != "" {
		attrs["files"] = filesAttribute(t.FilesKind)
	}
	describeResource(attrs, "", t.Revision)
	md := resourceDoc(t)
	return schema.Schema{Version: t.Lineage.Version, Attributes: attrs, Description: plain(md), MarkdownDescription: md}
}

func stringAttrs(names []string) map[string]schema.Attribute {
	m := map[string]schema.Attribute{}
	for _, n := range names {
		m[n] = schema.StringAttribute{Computed: true}
	}
	return m
}

// fieldAttribute maps one field: Required → R; a declared default → OC
// with the default materialised; else O. Immutable fields replace.
func fieldAttribute(f Field, optionalComputed bool) schema.Attribute {
	req := f.Required && !optionalComputed
	opt, comp, desc := !req, f.HasDefault || optionalComputed, fieldDoc(f)
	switch f.Kind {
	case KindString, KindRelation, KindJSON:
		return schema.StringAttribute{Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, stringplanmodifier.RequiresReplace()), Default: orNil(stringdefault.StaticString)(stringDefault(f))}
	case KindInt64:
		return schema.Int64Attribute{Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, int64planmodifier.RequiresReplace()), Default: orNil(int64default.StaticInt64)(numberDefault(f, json.Number.Int64))}
	case KindNumber:
		return schema.Float64Attribute{Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, float64planmodifier.RequiresReplace()), Default: orNil(float64default.StaticFloat64)(numberDefault(f, json.Number.Float64))}
	case KindBool:
		b, ok := f.Default.(bool)
		return schema.BoolAttribute{Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, boolplanmodifier.RequiresReplace()), Default: orNil(booldefault.StaticBool)(b, ok)}
	case KindStringSet:
		return schema.SetAttribute{ElementType: types.StringType, Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, setplanmodifier.RequiresReplace()), Default: orNil(setdefault.StaticValue)(emptyDefault(f, types.SetValueMust))}
	case KindStringList:
		return schema.ListAttribute{ElementType: types.StringType, Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, listplanmodifier.RequiresReplace()), Default: orNil(listdefault.StaticValue)(emptyDefault(f, types.ListValueMust))}
	case KindObject:
		return schema.SingleNestedAttribute{Attributes: nestedAttributes(f), Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, objectplanmodifier.RequiresReplace())}
	case KindBindingList, KindObjectList:
		nested := schema.NestedAttributeObject{Attributes: nestedAttributes(f)}
		return schema.ListNestedAttribute{NestedObject: nested, Required: req, Optional: opt, Computed: comp, Description: desc,
			PlanModifiers: replacing(f, listplanmodifier.RequiresReplace()), Default: orNil(listdefault.StaticValue)(emptyDefault(f, types.ListValueMust, nested.Type()))}
	}
	return schema.StringAttribute{Optional: true, Description: desc}
}

// nestedAttributes are the attributes of one element of a binding or
// object list.
func nestedAttributes(f Field) map[string]schema.Attribute {
	nested := map[string]schema.Attribute{}
	if f.Kind == KindBindingList {
		nested["name"] = schema.StringAttribute{Required: true, Description: "Binding name (a JavaScript identifier)."}
		nested["target_name"] = schema.StringAttribute{Required: true, Description: "Name of the bound " + f.Target + "."}
		return nested
	}
	for _, n := range f.Nested {
		nested[n.Attr] = fieldAttribute(Field{Member: n.Member, Attr: n.Attr, Kind: n.Kind, Required: n.Required, Target: n.Target, TargetAPI: n.TargetAPI, Nested: n.Nested, Doc: n.Doc}, false)
	}
	return nested
}

// replacing is the RequiresReplace modifier m of an immutable field; none
// for a mutable one.
func replacing[M any](f Field, m M) []M {
	if !f.Immutable {
		return nil
	}
	return []M{m}
}

// orNil wraps a static default constructor: the default of a value when
// ok, else no default (the zero D, a nil interface).
func orNil[V, D any](static func(V) D) func(V, bool) D {
	return func(v V, ok bool) D {
		var none D
		if !ok {
			return none
		}
		return static(v)
	}
}

// stringDefault is a string attribute's declared default: a JSON field's
// canonical text, else a declared string.
func stringDefault(f Field) (string, bool) {
	if !f.HasDefault {
		return "", false
	}
	if f.Kind == KindJSON {
		return canonicalText(f.Default), true
	}
	s, ok := f.Default.(string)
	return s, ok
}

// numberDefault is a declared number default read by conv
// (json.Number.Int64, json.Number.Float64); none when it does not convert.
func numberDefault[T any](f Field, conv func(json.Number) (T, error)) (T, bool) {
	var none T
	n, ok := f.Default.(json.Number)
	if !ok {
		return none, false
	}
	v, err := conv(n)
	if err != nil {
		return none, false
	}
	return v, true
}

// emptyDefault is the empty collection of a field whose declared default
// is [] (the only collection default a field maps), built by mk with the
// element type (string unless elem names one).
func emptyDefault[V any](f Field, mk func(attr.Type, []attr.Value) V, elem ...attr.Type) (V, bool) {
	if l, ok := f.Default.([]any); !ok || len(l) != 0 {
		var none V
		return none, false
	}
	et := attr.Type(types.StringType)
	if len(elem) > 0 {
		et = elem[0]
	}
	return mk(et, []attr.Value{}), true
}

// outputAttribute is a plain Computed attribute typed by the output schema.
func outputAttribute(c *Codec, name string) schema.Attribute {
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
	switch {
	case hasType(node, "integer"):
		return schema.Int64Attribute{Computed: true, Description: desc}
	case hasType(node, "number"):
		return schema.Float64Attribute{Computed: true, Description: desc}
	case hasType(node, "boolean"):
		return schema.BoolAttribute{Computed: true, Description: desc}
	}
	return schema.StringAttribute{Computed: true, Description: desc}
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
