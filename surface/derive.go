package surface

import (
	"context"
	"fmt"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
)

// FromProviderServer derives the surface of a provider served in-process
// (its GetProviderSchema answer).
func FromProviderServer(ctx context.Context, srv tfprotov6.ProviderServer) (*Surface, error) {
	resp, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, err
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return nil, fmt.Errorf("provider schema: %s: %s", d.Summary, d.Detail)
		}
	}
	s := &Surface{Types: protoTypes(resp.ResourceSchemas), DataSources: protoTypes(resp.DataSourceSchemas)}
	if len(s.DataSources) == 0 {
		s.DataSources = nil
	}
	return s, nil
}

func protoTypes(schemas map[string]*tfprotov6.Schema) map[string]Type {
	out := map[string]Type{}
	for name, sch := range schemas {
		t := Type{Version: sch.Version, Attributes: map[string]Attribute{}}
		if sch.Block != nil {
			protoAttrs(t.Attributes, "", sch.Block.Attributes)
		}
		out[name] = t
	}
	return out
}

func protoAttrs(out map[string]Attribute, prefix string, attrs []*tfprotov6.SchemaAttribute) {
	for _, a := range attrs {
		path := prefix + a.Name
		at := Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}
		if a.NestedType != nil {
			members := map[string]string{}
			for _, n := range a.NestedType.Attributes {
				members[n.Name] = protoTypeOf(n)
			}
			at.Type = nesting(a.NestedType.Nesting.String(), members)
			protoAttrs(out, path+".", a.NestedType.Attributes)
		} else {
			at.Type = tfType(a.Type)
		}
		out[path] = at
	}
}

func protoTypeOf(a *tfprotov6.SchemaAttribute) string {
	if a.NestedType == nil {
		return tfType(a.Type)
	}
	members := map[string]string{}
	for _, n := range a.NestedType.Attributes {
		members[n.Name] = protoTypeOf(n)
	}
	return nesting(a.NestedType.Nesting.String(), members)
}

func nesting(mode string, members map[string]string) string {
	obj := object(members)
	switch strings.ToLower(mode) {
	case "list", "nesting_list":
		return "list(" + obj + ")"
	case "set", "nesting_set":
		return "set(" + obj + ")"
	case "map", "nesting_map":
		return "map(" + obj + ")"
	}
	return obj
}

func object(members map[string]string) string {
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + members[k]
	}
	return "object({" + strings.Join(parts, ", ") + "})"
}

// tfType renders a tftypes type in the surface notation.
func tfType(t tftypes.Type) string {
	switch {
	case t == nil:
		return "dynamic"
	case t.Is(tftypes.String):
		return "string"
	case t.Is(tftypes.Number):
		return "number"
	case t.Is(tftypes.Bool):
		return "bool"
	case t.Is(tftypes.DynamicPseudoType):
		return "dynamic"
	case t.Is(tftypes.List{}):
		return "list(" + tfType(t.(tftypes.List).ElementType) + ")"
	case t.Is(tftypes.Set{}):
		return "set(" + tfType(t.(tftypes.Set).ElementType) + ")"
	case t.Is(tftypes.Map{}):
		return "map(" + tfType(t.(tftypes.Map).ElementType) + ")"
	case t.Is(tftypes.Object{}):
		m := map[string]string{}
		for k, v := range t.(tftypes.Object).AttributeTypes {
			m[k] = tfType(v)
		}
		return object(m)
	}
	return t.String()
}

// FromSchemaJSON derives the surface of one provider from the output of
// `tofu providers schema -json` (or terraform's); provider picks which
// provider when the document holds several (suffix match, e.g.
// "takoform/takoform"; "" when it holds one).
func FromSchemaJSON(data []byte, provider string) (*Surface, error) {
	var ps tfjson.ProviderSchemas
	if err := ps.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("provider schema JSON: %w", err)
	}
	var chosen *tfjson.ProviderSchema
	for addr, p := range ps.Schemas {
		if provider == "" || strings.HasSuffix(addr, provider) {
			if chosen != nil {
				return nil, fmt.Errorf("the schema document holds several providers; name one (e.g. takoform/takoform)")
			}
			chosen = p
		}
	}
	if chosen == nil {
		return nil, fmt.Errorf("the schema document holds no provider matching %q", provider)
	}
	s := &Surface{Types: jsonTypes(chosen.ResourceSchemas), DataSources: jsonTypes(chosen.DataSourceSchemas)}
	if len(s.DataSources) == 0 {
		s.DataSources = nil
	}
	return s, nil
}

func jsonTypes(schemas map[string]*tfjson.Schema) map[string]Type {
	out := map[string]Type{}
	for name, sch := range schemas {
		t := Type{Version: int64(sch.Version), Attributes: map[string]Attribute{}}
		if sch.Block != nil {
			jsonAttrs(t.Attributes, "", sch.Block.Attributes)
		}
		out[name] = t
	}
	return out
}

func jsonAttrs(out map[string]Attribute, prefix string, attrs map[string]*tfjson.SchemaAttribute) {
	for name, a := range attrs {
		path := prefix + name
		at := Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}
		if a.AttributeNestedType != nil {
			at.Type = jsonNestedType(a.AttributeNestedType)
			jsonAttrs(out, path+".", a.AttributeNestedType.Attributes)
		} else {
			at.Type = ctyType(a.AttributeType)
		}
		out[path] = at
	}
}

func jsonNestedType(n *tfjson.SchemaNestedAttributeType) string {
	members := map[string]string{}
	for k, a := range n.Attributes {
		if a.AttributeNestedType != nil {
			members[k] = jsonNestedType(a.AttributeNestedType)
		} else {
			members[k] = ctyType(a.AttributeType)
		}
	}
	return nesting(string(n.NestingMode), members)
}

func ctyType(t cty.Type) string {
	switch {
	case t == cty.NilType:
		return "dynamic"
	case t == cty.String:
		return "string"
	case t == cty.Number:
		return "number"
	case t == cty.Bool:
		return "bool"
	case t == cty.DynamicPseudoType:
		return "dynamic"
	case t.IsListType():
		return "list(" + ctyType(t.ElementType()) + ")"
	case t.IsSetType():
		return "set(" + ctyType(t.ElementType()) + ")"
	case t.IsMapType():
		return "map(" + ctyType(t.ElementType()) + ")"
	case t.IsObjectType():
		m := map[string]string{}
		for k, v := range t.AttributeTypes() {
			m[k] = ctyType(v)
		}
		return object(m)
	}
	return t.FriendlyName()
}
