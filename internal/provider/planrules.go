package provider

import (
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/provider/tfschema"
)

// The framework's part of planning one resource, on tftypes values
// (repo decisions 0028, 0066, 0069): what terraform-plugin-framework
// v1.19's PlanResourceChange does before it calls the resource's
// ModifyPlan, for the schemas buildSchema builds — static defaults where
// the configuration is null, computed attributes null in the
// configuration planned unknown when the plan differs from the prior
// state, then the attribute plan modifiers UseStateForUnknown and
// RequiresReplace. The rules are read once per type from the provider's
// own attribute tree (planRulesOf), never from a framework schema; a tree
// with a default or modifier on a nested attribute, which plan does not
// apply, has no rules, and NewServer refuses the type.

// planAttr is what planning (and validation, validate.go) needs of one
// attribute of the schema.
type planAttr struct {
	*tfschema.Attr                      // flags, deprecation, default, modifiers, kind: as the tree states them
	typ            tftypes.Type         // Attr.Type(), built once
	nested         map[string]*planAttr // the nested attributes' rules (ListNested, SingleNested)
}

// single reports whether nested are one object's (a single nested
// attribute), not a list element's.
func (a *planAttr) single() bool { return a.Kind == tfschema.SingleNested }

// planRules are one type's planning rules: its object type and top-level
// attributes.
type planRules struct {
	typ   tftypes.Object
	attrs map[string]*planAttr
}

// planRulesOf reads the planning rules of the schema s; an error names
// what the server does not reproduce (NewServer refuses the type).
func planRulesOf(s *tfschema.Schema) (*planRules, error) {
	typ := s.Type()
	attrs, err := planAttrsOf(s.Attrs, typ, true)
	if err != nil {
		return nil, err
	}
	return &planRules{typ: typ, attrs: attrs}, nil
}

// planAttrsOf reads the attributes in, of the object type typ; a nested
// one (top false) may have no default and no modifier.
func planAttrsOf(in map[string]*tfschema.Attr, typ tftypes.Object, top bool) (map[string]*planAttr, error) {
	out := make(map[string]*planAttr, len(in))
	for name, a := range in {
		if !top && (a.Default != nil || len(a.Mods) > 0) {
			return nil, fmt.Errorf("attribute %s: a nested attribute with a default or plan modifier", name)
		}
		p := &planAttr{Attr: a, typ: typ.AttributeTypes[name]}
		var err error
		if a.Kind == tfschema.ListNested || a.Kind == tfschema.SingleNested {
			p.nested, err = planAttrsOf(a.Nested, tfschema.ObjectOf(a.Nested), false)
		}
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
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
		if a.Default != nil && cfg[name].IsNull() {
			attrs[name] = *a.Default
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
			for _, m := range a.Mods {
				switch m {
				case tfschema.UseStateForUnknown:
					if !attrs[name].IsKnown() && cfg[name].IsKnown() {
						attrs[name] = old[name]
					}
				case tfschema.RequiresReplace:
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
			if a.Computed && a.Default == nil {
				attrs[name] = tftypes.NewValue(a.typ, tftypes.UnknownValue)
			}
			continue
		}
		v := attrs[name]
		if a.nested == nil || !c.IsKnown() || !v.IsKnown() || v.IsNull() {
			continue
		}
		if a.single() {
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
