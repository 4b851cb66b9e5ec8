package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
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
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/takoform/takoform/internal/provider/tfschema"
)

// The framework's schemas, derived from the provider's own attribute
// tree (repo decision 0069) for the framework adapters only (framework.go):
// the framework server they run in is the oracle of the differential
// tests (server_rpc_test.go, server_host_test.go), which hold its answers
// — the schemas it converts these to included — equal to the served ones
// (tfschema.Schema.Proto). Each tree attribute maps to the framework
// attribute of its kind with the same flags and descriptions, its static
// default as the framework's Static<Kind> default and its modifiers as
// the framework's UseStateForUnknown and RequiresReplace.

// frameworkSchema is the framework resource schema of s.
func frameworkSchema(s *tfschema.Schema) schema.Schema {
	attrs := make(map[string]schema.Attribute, len(s.Attrs))
	for n, a := range s.Attrs {
		attrs[n] = frameworkAttr(a)
	}
	return schema.Schema{Version: s.Version, Attributes: attrs, Description: s.Description, MarkdownDescription: s.MarkdownDescription}
}

func frameworkAttrs(in map[string]*tfschema.Attr) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(in))
	for n, a := range in {
		out[n] = frameworkAttr(a)
	}
	return out
}

// frameworkAttr is the framework attribute of a; a default the
// framework's type does not read panics (the tree's defaults are values
// of the attribute's own type, tfschema.Attr.Default).
func frameworkAttr(a *tfschema.Attr) schema.Attribute {
	switch a.Kind {
	case tfschema.Int64:
		v := schema.Int64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, int64planmodifier.UseStateForUnknown, int64planmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = int64default.StaticInt64(fwDefault[types.Int64](types.Int64Type, a).ValueInt64())
		}
		return v
	case tfschema.Float64:
		v := schema.Float64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, float64planmodifier.UseStateForUnknown, float64planmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = float64default.StaticFloat64(fwDefault[types.Float64](types.Float64Type, a).ValueFloat64())
		}
		return v
	case tfschema.Bool:
		v := schema.BoolAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, boolplanmodifier.UseStateForUnknown, boolplanmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = booldefault.StaticBool(fwDefault[types.Bool](types.BoolType, a).ValueBool())
		}
		return v
	case tfschema.StringSet:
		v := schema.SetAttribute{ElementType: types.StringType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, setplanmodifier.UseStateForUnknown, setplanmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = setdefault.StaticValue(fwDefault[types.Set](v.GetType(), a))
		}
		return v
	case tfschema.StringList:
		v := schema.ListAttribute{ElementType: types.StringType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, listplanmodifier.UseStateForUnknown, listplanmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = listdefault.StaticValue(fwDefault[types.List](v.GetType(), a))
		}
		return v
	case tfschema.ListNested:
		v := schema.ListNestedAttribute{NestedObject: schema.NestedAttributeObject{Attributes: frameworkAttrs(a.Nested)},
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, listplanmodifier.UseStateForUnknown, listplanmodifier.RequiresReplace)}
		if a.Default != nil {
			v.Default = listdefault.StaticValue(fwDefault[types.List](v.GetType(), a))
		}
		return v
	case tfschema.SingleNested:
		if a.Default != nil {
			panic("provider: a single nested attribute with a default")
		}
		return schema.SingleNestedAttribute{Attributes: frameworkAttrs(a.Nested),
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
			PlanModifiers: mods(a, objectplanmodifier.UseStateForUnknown, objectplanmodifier.RequiresReplace)}
	}
	v := schema.StringAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation,
		PlanModifiers: mods(a, stringplanmodifier.UseStateForUnknown, stringplanmodifier.RequiresReplace)}
	if a.Default != nil {
		v.Default = stringdefault.StaticString(fwDefault[types.String](types.StringType, a).ValueString())
	}
	return v
}

// mods are a's plan modifiers built by the kind's framework constructors,
// in order; nil for none.
func mods[M any](a *tfschema.Attr, keep, replace func() M) []M {
	var out []M
	for _, m := range a.Mods {
		switch m {
		case tfschema.UseStateForUnknown:
			out = append(out, keep())
		case tfschema.RequiresReplace:
			out = append(out, replace())
		}
	}
	return out
}

// fwDefault is a's default read by the framework type t as a V.
func fwDefault[V attr.Value](t attr.Type, a *tfschema.Attr) V {
	v, err := t.ValueFromTerraform(context.Background(), *a.Default)
	out, ok := v.(V)
	if err != nil || !ok {
		panic(fmt.Sprintf("provider: the default %s does not read as %T: %v", a.Default, out, err))
	}
	return out
}

// frameworkDataSchema is the framework data-source schema of s.
func frameworkDataSchema(s *tfschema.Schema) dschema.Schema {
	return dschema.Schema{Attributes: frameworkDataAttrs(s.Attrs), Description: s.Description, MarkdownDescription: s.MarkdownDescription}
}

func frameworkDataAttrs(in map[string]*tfschema.Attr) map[string]dschema.Attribute {
	out := make(map[string]dschema.Attribute, len(in))
	for n, a := range in {
		switch a.Kind {
		case tfschema.Int64:
			out[n] = dschema.Int64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.Float64:
			out[n] = dschema.Float64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.Bool:
			out[n] = dschema.BoolAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.StringSet:
			out[n] = dschema.SetAttribute{ElementType: types.StringType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.StringList:
			out[n] = dschema.ListAttribute{ElementType: types.StringType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.ListNested:
			out[n] = dschema.ListNestedAttribute{NestedObject: dschema.NestedAttributeObject{Attributes: frameworkDataAttrs(a.Nested)},
				Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		case tfschema.SingleNested:
			out[n] = dschema.SingleNestedAttribute{Attributes: frameworkDataAttrs(a.Nested),
				Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		default:
			out[n] = dschema.StringAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, Description: a.Description, MarkdownDescription: a.MarkdownDescription, DeprecationMessage: a.Deprecation}
		}
	}
	return out
}
