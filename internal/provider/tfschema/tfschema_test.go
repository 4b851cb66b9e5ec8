package tfschema

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestProto: attributes are served sorted by name, a Markdown description
// wins over the plain one (served as markdown), a plain one alone is
// served as plain, nested attributes are a nested object with no Type,
// and the served value type is the schema's Type.
func TestProto(t *testing.T) {
	s := &Schema{Version: 3, Description: "d", MarkdownDescription: "`d`", Attrs: map[string]*Attr{
		"zeta":  {Kind: Int64, Required: true, Description: "plain only"},
		"alpha": {Kind: StringSet, Optional: true, Computed: true, Sensitive: true, Description: "p", MarkdownDescription: "m", Deprecation: "gone"},
		"list": {Kind: ListNested, Computed: true, Nested: map[string]*Attr{
			"b": {Kind: Bool, Computed: true}, "a": {Kind: Float64, Computed: true}}},
		"one": {Kind: SingleNested, Optional: true, Nested: map[string]*Attr{"s": {Kind: StringList, Optional: true}}},
	}}
	p := s.Proto()
	if p.Version != 3 || p.Block.Description != "`d`" || p.Block.DescriptionKind != tfprotov6.StringKindMarkdown {
		t.Errorf("block: version %d, %q (%v)", p.Version, p.Block.Description, p.Block.DescriptionKind)
	}
	var names []string
	for _, a := range p.Block.Attributes {
		names = append(names, a.Name)
	}
	if got := len(names); got != 4 || names[0] != "alpha" || names[1] != "list" || names[2] != "one" || names[3] != "zeta" {
		t.Fatalf("attributes %v, want sorted", names)
	}
	alpha, list, one, zeta := p.Block.Attributes[0], p.Block.Attributes[1], p.Block.Attributes[2], p.Block.Attributes[3]
	if alpha.Description != "m" || alpha.DescriptionKind != tfprotov6.StringKindMarkdown || !alpha.Sensitive || !alpha.Deprecated || alpha.DeprecationMessage != "gone" ||
		!alpha.Optional || !alpha.Computed || alpha.Required || !alpha.Type.Equal(tftypes.Set{ElementType: tftypes.String}) {
		t.Errorf("alpha: %+v", alpha)
	}
	if zeta.Description != "plain only" || zeta.DescriptionKind != tfprotov6.StringKindPlain || !zeta.Required || !zeta.Type.Equal(tftypes.Number) {
		t.Errorf("zeta: %+v", zeta)
	}
	if list.Type != nil || list.NestedType == nil || list.NestedType.Nesting != tfprotov6.SchemaObjectNestingModeList ||
		len(list.NestedType.Attributes) != 2 || list.NestedType.Attributes[0].Name != "a" || !list.NestedType.Attributes[0].Type.Equal(tftypes.Number) {
		t.Errorf("list: %+v", list)
	}
	if one.Type != nil || one.NestedType == nil || one.NestedType.Nesting != tfprotov6.SchemaObjectNestingModeSingle {
		t.Errorf("one: %+v", one)
	}
	if got := p.ValueType(); !got.Equal(s.Type()) {
		t.Errorf("served value type %s, the schema's %s", got, s.Type())
	}
	want := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"alpha": tftypes.Set{ElementType: tftypes.String},
		"list":  tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.Number, "b": tftypes.Bool}}},
		"one":   tftypes.Object{AttributeTypes: map[string]tftypes.Type{"s": tftypes.List{ElementType: tftypes.String}}},
		"zeta":  tftypes.Number,
	}}
	if !s.Type().Equal(want) {
		t.Errorf("type %s, want %s", s.Type(), want)
	}
}
