package provider

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// priorV0 holds the FROZEN layout-0 object type of every Edge resource
// type, committed once and never derived from the live schema (decision
// 0030; DESIGN "State upgraders"). Keyed by type name, each value is a
// tftypes JSON type.
//
//go:embed prior/v0.json
var priorV0 []byte

// UpgradeState registers the version 0 → 1 upgrader: a whole-value carry
// declared against the frozen prior schema, so the framework decodes the
// old value; attributes the old layout lacks become null.
func (r *Resource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	prior, err := PriorSchema(r.spec.Name)
	if err != nil {
		return nil
	}
	return map[int64]resource.StateUpgrader{
		0: {
			PriorSchema: prior,
			StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
				old, err := attrsOf(req.State.Raw)
				if err != nil {
					resp.Diagnostics.Append(renderError("Cannot read version 0 state", err, identity{Type: r.spec.Name, Code: "takoform.provider/internal"})...)
					return
				}
				next := map[string]any{}
				for name := range r.spec.Schema.Attributes {
					if v, ok := old[name]; ok {
						next[name] = v
					}
				}
				resp.Diagnostics.Append(r.setState(ctx, &resp.State, next)...)
			},
		},
	}
}

// PriorSchema builds the frozen version-0 schema of a type; types with no
// frozen layout (never released at version 0) return an error.
func PriorSchema(typeName string) (*schema.Schema, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(priorV0, &all); err != nil {
		return nil, err
	}
	raw, ok := all[typeName]
	if !ok {
		return nil, fmt.Errorf("no frozen version 0 layout for %s", typeName)
	}
	t, err := tftypes.ParseJSONType(raw) //nolint:staticcheck // the protocol's own type encoding
	if err != nil {
		return nil, err
	}
	obj, ok := t.(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("frozen layout of %s is not an object", typeName)
	}
	s := schema.Schema{Version: 0, Attributes: map[string]schema.Attribute{}}
	for name, at := range obj.AttributeTypes {
		s.Attributes[name] = priorAttribute(at)
	}
	return &s, nil
}

func priorAttribute(t tftypes.Type) schema.Attribute {
	switch {
	case t.Is(tftypes.String):
		return schema.StringAttribute{Optional: true}
	case t.Is(tftypes.Number):
		return schema.NumberAttribute{Optional: true}
	case t.Is(tftypes.Bool):
		return schema.BoolAttribute{Optional: true}
	case t.Is(tftypes.Set{}):
		return schema.SetAttribute{Optional: true, ElementType: attrType(t.(tftypes.Set).ElementType)}
	case t.Is(tftypes.List{}):
		et := t.(tftypes.List).ElementType
		if o, ok := et.(tftypes.Object); ok {
			nested := map[string]schema.Attribute{}
			for n, a := range o.AttributeTypes {
				nested[n] = priorAttribute(a)
			}
			return schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: nested}}
		}
		return schema.ListAttribute{Optional: true, ElementType: attrType(et)}
	}
	return schema.StringAttribute{Optional: true}
}

func attrType(tftypes.Type) attr.Type { return types.StringType }
