package provider

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The framework's part of planning one resource, on tftypes values
// (repo decisions 0028, 0066): what terraform-plugin-framework v1.19's
// PlanResourceChange does before it calls the resource's ModifyPlan, for
// the schemas buildSchema builds — static defaults where the
// configuration is null, computed attributes null in the configuration
// planned unknown when the plan differs from the prior state, then the
// attribute plan modifiers UseStateForUnknown and RequiresReplace. The
// rules are read once per type from the built schema (planRulesOf); a
// schema using anything else (another modifier, a default or modifier on
// a nested attribute, another attribute kind) has no rules, and NewServer
// refuses the type.

// planAttr is what planning needs of one attribute of the schema.
type planAttr struct {
	typ                          tftypes.Type
	required, optional, computed bool
	deprecated                   string         // a deprecation message, or ""
	def                          *tftypes.Value // a static default, or nil
	mods                         []planMod      // in declared order
	nested                       map[string]*planAttr
	single                       bool // nested are one object's (a single nested attribute), not a list element's
}

// planMod is one recognised attribute plan modifier.
type planMod int

const (
	modUseStateForUnknown planMod = iota + 1
	modRequiresReplace
)

// planRules are one type's planning rules: its object type and top-level
// attributes.
type planRules struct {
	typ   tftypes.Object
	attrs map[string]*planAttr
}

// planRulesOf reads the planning rules of s, whose Terraform type is typ;
// an error names what the server does not reproduce (NewServer refuses the type).
func planRulesOf(ctx context.Context, s schema.Schema, typ tftypes.Object) (*planRules, error) {
	if len(s.Blocks) > 0 || s.DeprecationMessage != "" {
		return nil, fmt.Errorf("the schema has blocks or is deprecated")
	}
	attrs, err := planAttrsOf(ctx, s.Attributes, typ, true)
	if err != nil {
		return nil, err
	}
	return &planRules{typ: typ, attrs: attrs}, nil
}

func planAttrsOf(ctx context.Context, in map[string]schema.Attribute, typ tftypes.Object, top bool) (map[string]*planAttr, error) {
	out := make(map[string]*planAttr, len(in))
	for name, a := range in {
		p, err := planAttrOf(ctx, a, typ.AttributeTypes[name])
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		if !top && (p.def != nil || len(p.mods) > 0) {
			return nil, fmt.Errorf("attribute %s: a nested attribute with a default or plan modifier", name)
		}
		out[name] = p
	}
	return out, nil
}

// planAttrOf reads one attribute: its default (computed through the
// framework's own Default), its modifiers and, for a list of nested
// objects, its nested attributes. Every attribute kind of the framework
// has the fields PlanModifiers and Default; they are read through
// reflection, one way for all kinds.
func planAttrOf(ctx context.Context, a schema.Attribute, typ tftypes.Type) (*planAttr, error) {
	if a.IsWriteOnly() {
		return nil, fmt.Errorf("write-only")
	}
	p := &planAttr{typ: typ, required: a.IsRequired(), optional: a.IsOptional(), computed: a.IsComputed(), deprecated: a.GetDeprecationMessage()}
	rv := reflect.ValueOf(a)
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a %T", a)
	}
	if v := rv.FieldByName("Validators"); v.IsValid() && v.Len() > 0 {
		return nil, fmt.Errorf("validators")
	}
	switch a := a.(type) {
	case schema.StringAttribute, schema.Int64Attribute, schema.Float64Attribute, schema.BoolAttribute, schema.SetAttribute, schema.ListAttribute:
	case schema.ListNestedAttribute:
		nested, err := nestedPlanAttrs(ctx, a, typ)
		if err != nil {
			return nil, err
		}
		p.nested = nested
	case schema.SingleNestedAttribute:
		ot, ok := typ.(tftypes.Object)
		if !ok || len(a.Validators) > 0 {
			return nil, fmt.Errorf("a single nested attribute of type %s or with validators", typ)
		}
		nested, err := planAttrsOf(ctx, a.Attributes, ot, false)
		if err != nil {
			return nil, err
		}
		p.nested, p.single = nested, true
	default:
		return nil, fmt.Errorf("a %T", a)
	}
	def, err := staticDefault(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("its default: %w", err)
	}
	if def != nil {
		v, err := def.ToTerraformValue(ctx)
		if err != nil {
			return nil, fmt.Errorf("its default: %w", err)
		}
		p.def = &v
	}
	mods := rv.FieldByName("PlanModifiers")
	for i := range mods.Len() {
		k, err := planModOf(ctx, mods.Index(i).Interface())
		if err != nil {
			return nil, err
		}
		p.mods = append(p.mods, k)
	}
	return p, nil
}

func nestedPlanAttrs(ctx context.Context, a schema.ListNestedAttribute, typ tftypes.Type) (map[string]*planAttr, error) {
	if len(a.NestedObject.PlanModifiers) > 0 || len(a.NestedObject.Validators) > 0 {
		return nil, fmt.Errorf("nested object plan modifiers or validators")
	}
	lt, ok := typ.(tftypes.List)
	if !ok {
		return nil, fmt.Errorf("a list nested attribute of type %s", typ)
	}
	ot, ok := lt.ElementType.(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("a list nested attribute of element type %s", lt.ElementType)
	}
	return planAttrsOf(ctx, a.NestedObject.Attributes, ot, false)
}

// staticDefault is the value the Default of attribute a plans for a null
// configuration, nil without one: every attribute kind's Default field
// has one method Default<Kind>(ctx, request, *response) answering
// PlanValue and Diagnostics.
func staticDefault(ctx context.Context, a schema.Attribute) (attr.Value, error) {
	d := reflect.ValueOf(a).FieldByName("Default")
	if !d.IsValid() {
		return nil, fmt.Errorf("%T has no Default", a)
	}
	if d.IsNil() {
		return nil, nil
	}
	var m reflect.Value
	for i := range d.Type().NumMethod() {
		if mt := d.Type().Method(i); strings.HasPrefix(mt.Name, "Default") && mt.Type.NumIn() == 3 && mt.Type.In(2).Kind() == reflect.Pointer {
			m = d.Method(i)
		}
	}
	if !m.IsValid() {
		return nil, fmt.Errorf("a default %s without a Default method", d.Type())
	}
	resp := reflect.New(m.Type().In(2).Elem())
	m.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.Zero(m.Type().In(1)), resp})
	dd, ok := resp.Elem().FieldByName("Diagnostics").Interface().(diag.Diagnostics)
	if !ok {
		return nil, fmt.Errorf("a default answering no diagnostics")
	}
	if dd.HasError() {
		return nil, fmt.Errorf("%s", dd.Errors()[0].Detail())
	}
	pv, ok := resp.Elem().FieldByName("PlanValue").Interface().(attr.Value)
	if !ok {
		return nil, fmt.Errorf("a default answering no value")
	}
	return pv, nil
}

// describer is what every framework plan modifier is.
type describer interface {
	Description(context.Context) string
}

// knownMods are the modifiers the server reproduces, as the
// framework's constructors build them: recognised by their dynamic type
// and description (RequiresReplaceIf shares RequiresReplace's type, not
// its description).
var knownMods = []struct {
	mod  any
	kind planMod
}{
	{stringplanmodifier.UseStateForUnknown(), modUseStateForUnknown},
	{stringplanmodifier.RequiresReplace(), modRequiresReplace},
	{int64planmodifier.RequiresReplace(), modRequiresReplace},
	{float64planmodifier.RequiresReplace(), modRequiresReplace},
	{boolplanmodifier.RequiresReplace(), modRequiresReplace},
	{setplanmodifier.RequiresReplace(), modRequiresReplace},
	{listplanmodifier.RequiresReplace(), modRequiresReplace},
	{objectplanmodifier.RequiresReplace(), modRequiresReplace},
}

func planModOf(ctx context.Context, m any) (planMod, error) {
	d, ok := m.(describer)
	if !ok {
		return 0, fmt.Errorf("a plan modifier %T without a description", m)
	}
	for _, k := range knownMods {
		kd, ok := k.mod.(describer)
		if ok && reflect.TypeOf(m) == reflect.TypeOf(k.mod) && d.Description(ctx) == kd.Description(ctx) {
			return k.kind, nil
		}
	}
	return 0, fmt.Errorf("the plan modifier %T (%q)", m, d.Description(ctx))
}

// plan is the framework's plan of one resource before ModifyPlan:
// proposed (OpenTofu's proposed new state) with the defaults, unknowns
// and attribute plan modifiers applied against config and prior, and the
// paths whose change requires replacement (unsorted: PlanResourceChange
// sorts and deduplicates them with ModifyPlan's, once). A null proposed (a
// destroy) is planned as it is.
func (p *planRules) plan(config, proposed, prior tftypes.Value) (tftypes.Value, path.Paths, error) {
	if proposed.IsNull() {
		return proposed, nil, nil
	}
	var attrs, cfg map[string]tftypes.Value
	if err := proposed.As(&attrs); err != nil {
		return proposed, nil, err
	}
	if err := config.As(&cfg); err != nil {
		return proposed, nil, err
	}
	for name, a := range p.attrs {
		if a.def != nil && cfg[name].IsNull() {
			attrs[name] = *a.def
		}
	}
	if !tftypes.NewValue(p.typ, attrs).Equal(prior) {
		markUnknown(p.attrs, attrs, cfg)
	}
	var replace path.Paths
	if !prior.IsNull() {
		var old map[string]tftypes.Value
		if err := prior.As(&old); err != nil {
			return proposed, nil, err
		}
		for name, a := range p.attrs {
			for _, m := range a.mods {
				switch m {
				case modUseStateForUnknown:
					if !attrs[name].IsKnown() && cfg[name].IsKnown() {
						attrs[name] = old[name]
					}
				case modRequiresReplace:
					if !attrs[name].Equal(old[name]) {
						replace = append(replace, path.Root(name))
					}
				}
			}
		}
	}
	return tftypes.NewValue(p.typ, attrs), replace, nil
}

// markUnknown plans unknown each computed attribute without a default
// whose configuration is null, and the nested ones of a configured single
// object or list of objects, element by element.
func markUnknown(rules map[string]*planAttr, attrs, cfg map[string]tftypes.Value) {
	for name, a := range rules {
		c := cfg[name]
		if c.IsNull() {
			if a.computed && a.def == nil {
				attrs[name] = tftypes.NewValue(a.typ, tftypes.UnknownValue)
			}
			continue
		}
		v := attrs[name]
		if a.nested == nil || !c.IsKnown() || !v.IsKnown() || v.IsNull() {
			continue
		}
		if a.single {
			var oa, oc map[string]tftypes.Value
			if v.As(&oa) == nil && c.As(&oc) == nil {
				markUnknown(a.nested, oa, oc)
				attrs[name] = tftypes.NewValue(a.typ, oa)
			}
			continue
		}
		var elems, celems []tftypes.Value
		if v.As(&elems) != nil || c.As(&celems) != nil {
			continue
		}
		lt, ok := a.typ.(tftypes.List)
		if !ok {
			continue
		}
		for i, e := range elems {
			if i >= len(celems) || !celems[i].IsKnown() || celems[i].IsNull() || !e.IsKnown() || e.IsNull() {
				continue
			}
			var ea, ec map[string]tftypes.Value
			if e.As(&ea) != nil || celems[i].As(&ec) != nil {
				continue
			}
			markUnknown(a.nested, ea, ec)
			elems[i] = tftypes.NewValue(lt.ElementType, ea)
		}
		attrs[name] = tftypes.NewValue(a.typ, elems)
	}
}

// normaliseReplace sorts and deduplicates paths as the framework does
// (fwserver.NormaliseRequiresReplace).
func normaliseReplace(ps path.Paths) path.Paths {
	sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	out := ps[:0]
	for _, p := range ps {
		if len(out) > 0 && p.Equal(out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}
