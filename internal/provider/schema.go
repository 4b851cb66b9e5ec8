package provider

import (
	"bytes"
	"encoding/json"

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
		"name":           schema.StringAttribute{Required: !t.Revision, Optional: t.Revision, Computed: t.Revision, PlanModifiers: replace},
		"space":          schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace},
		"create_timeout": schema.StringAttribute{Optional: true},
		"delete_timeout": schema.StringAttribute{Optional: true},
		"uid":            schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"generation":     schema.StringAttribute{Computed: true},
		"revision":       schema.StringAttribute{Computed: true},
		"conditions": schema.ListNestedAttribute{Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: stringAttrs(conditionAttrs)}},
		"ready":                   schema.BoolAttribute{Computed: true},
		"outputs_json":            schema.StringAttribute{Computed: true},
		"form_api_version":        schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"form_kind":               schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"form_definition_version": schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"form_schema_digest":      schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"form_package_digest":     schema.StringAttribute{Computed: true, PlanModifiers: keep},
		"relation_drift_reason":   schema.StringAttribute{Computed: true},
		"pending_operation_id":    schema.StringAttribute{Computed: true},
	}
	if t.HasUpdate {
		attrs["update_timeout"] = schema.StringAttribute{Optional: true}
	}
	if t.Revision {
		attrs["revision_owner"] = schema.StringAttribute{Optional: true}
	}
	for _, f := range t.Create.Fields {
		attrs[f.Attr] = fieldAttribute(f, t.LocalModules && f.Member == "manifestDigest")
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
	opt := !req
	comp := f.HasDefault || optionalComputed
	desc := fieldDoc(f)
	switch f.Kind {
	case KindString, KindRelation, KindJSON:
		a := schema.StringAttribute{Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
		}
		if f.HasDefault {
			if f.Kind == KindJSON {
				a.Default = stringdefault.StaticString(canonicalText(f.Default))
			} else if s, ok := f.Default.(string); ok {
				a.Default = stringdefault.StaticString(s)
			}
		}
		return a
	case KindInt64:
		a := schema.Int64Attribute{Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Int64{int64planmodifier.RequiresReplace()}
		}
		if n, ok := f.Default.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				a.Default = int64default.StaticInt64(i)
			}
		}
		return a
	case KindNumber:
		a := schema.Float64Attribute{Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Float64{float64planmodifier.RequiresReplace()}
		}
		if n, ok := f.Default.(json.Number); ok {
			if x, err := n.Float64(); err == nil {
				a.Default = float64default.StaticFloat64(x)
			}
		}
		return a
	case KindBool:
		a := schema.BoolAttribute{Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
		}
		if b, ok := f.Default.(bool); ok {
			a.Default = booldefault.StaticBool(b)
		}
		return a
	case KindStringSet:
		a := schema.SetAttribute{ElementType: types.StringType, Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.Set{setplanmodifier.RequiresReplace()}
		}
		if l, ok := f.Default.([]any); ok && len(l) == 0 {
			a.Default = setdefault.StaticValue(types.SetValueMust(types.StringType, []attr.Value{}))
		}
		return a
	case KindStringList:
		a := schema.ListAttribute{ElementType: types.StringType, Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplace()}
		}
		if l, ok := f.Default.([]any); ok && len(l) == 0 {
			a.Default = listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{}))
		}
		return a
	case KindBindingList, KindObjectList:
		nested := map[string]schema.Attribute{}
		if f.Kind == KindBindingList {
			nested["name"] = schema.StringAttribute{Required: true, Description: "Binding name (a JavaScript identifier)."}
			nested["target_name"] = schema.StringAttribute{Required: true, Description: "Name of the bound " + f.Target + "."}
		} else {
			for _, n := range f.Nested {
				nested[n.Attr] = fieldAttribute(Field{Member: n.Member, Attr: n.Attr, Kind: n.Kind, Required: n.Required, Target: n.Target, TargetAPI: n.TargetAPI, Nested: n.Nested, Doc: n.Doc}, false)
			}
		}
		a := schema.ListNestedAttribute{NestedObject: schema.NestedAttributeObject{Attributes: nested}, Required: req, Optional: opt, Computed: comp, Description: desc}
		if f.Immutable {
			a.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplace()}
		}
		if l, ok := f.Default.([]any); ok && len(l) == 0 {
			a.Default = listdefault.StaticValue(types.ListValueMust(a.NestedObject.Type(), []attr.Value{}))
		}
		return a
	}
	return schema.StringAttribute{Optional: true, Description: desc}
}

// outputAttribute is a plain Computed attribute typed by the output schema.
func outputAttribute(c *Codec, name string) schema.Attribute {
	props := mapOf(mapOf(decodeRaw(c.Def.OutputSchemaJSON()))["properties"])
	node := mapOf(props[name])
	desc, _ := node["description"].(string)
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

func decodeRaw(b []byte) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&v)
	return v
}
