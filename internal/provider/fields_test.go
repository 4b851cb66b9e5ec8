package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/internal/provider/tfschema"
)

// schemaDoc decodes a JSON Schema document the way form.Definition holds
// one (json.Number numbers).
func schemaDoc(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFieldMapping: each JSON Schema shape of a desired member maps to its
// one field kind and attribute name (terraform-surface.md "Field
// mapping"); shapes the mapping does not know degrade to a _json string.
func TestFieldMapping(t *testing.T) {
	root := schemaDoc(t, `{"$defs": {
		"count": {"type": "integer", "description": "from the definition"},
		"ref": {"type": "object", "additionalProperties": false, "required": ["apiVersion", "kind", "name"],
			"properties": {"apiVersion": {"const": "edge.forms.takoform.com/v1alpha1"}, "kind": {"const": "Worker"}, "name": {"type": "string"}}}}}`)
	for _, c := range []struct {
		member, node string
		want         Field
	}{
		{"displayName", `{"type": "string", "description": "Shown."}`, Field{Attr: "display_name", Kind: KindString, Doc: "Shown."}},
		{"maybe", `{"type": ["string", "null"]}`, Field{Attr: "maybe", Kind: KindString}},
		{"retries", `{"type": "integer"}`, Field{Attr: "retries", Kind: KindInt64}},
		{"ratio", `{"type": "number"}`, Field{Attr: "ratio", Kind: KindNumber}},
		{"enabled", `{"type": "boolean"}`, Field{Attr: "enabled", Kind: KindBool}},
		{"viaRef", `{"$ref": "#/$defs/count"}`, Field{Attr: "via_ref", Kind: KindInt64, Doc: "from the definition"}},
		{"refDoc", `{"$ref": "#/$defs/count", "description": "beside the ref"}`, Field{Attr: "ref_doc", Kind: KindInt64, Doc: "beside the ref"}},
		{"worker", `{"$ref": "#/$defs/ref"}`, Field{Attr: "worker", Kind: KindRelation, Target: "Worker", TargetAPI: "edge.forms.takoform.com/v1alpha1"}},
		{"tags", `{"type": "array", "uniqueItems": true, "items": {"type": "string"}}`, Field{Attr: "tags", Kind: KindStringSet}},
		{"hosts", `{"type": "array", "items": {"type": "string"}}`, Field{Attr: "hosts", Kind: KindStringList}},
		{"bindings", `{"type": "array", "x-takoform-binding": "kv", "items": {"type": "object", "properties": {"name": {"type": "string"}, "resource": {"$ref": "#/$defs/ref"}}}}`,
			Field{Attr: "bindings", Kind: KindBindingList, Target: "Worker", TargetAPI: "edge.forms.takoform.com/v1alpha1"}},
		{"rules", `{"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["path"],
			"properties": {"path": {"type": "string"}, "maxAge": {"type": "integer"}}}}`,
			Field{Attr: "rules", Kind: KindObjectList, Nested: []Field{
				{Member: "maxAge", Attr: "max_age", Kind: KindInt64},
				{Member: "path", Attr: "path", Kind: KindString, Required: true},
			}}},
		{"openRules", `{"type": "array", "items": {"type": "object"}}`, Field{Attr: "open_rules_json", Kind: KindJSON}},
		{"assets", `{"type": "object", "additionalProperties": false, "required": ["bundle", "mode"],
			"properties": {"bundle": {"$ref": "#/$defs/ref"}, "mode": {"enum": ["a", "b"], "type": "string"}, "first": {"type": "boolean"}}}`,
			Field{Attr: "assets", Kind: KindObject, Nested: []Field{
				{Member: "bundle", Attr: "bundle", Kind: KindRelation, Target: "Worker", TargetAPI: "edge.forms.takoform.com/v1alpha1", Required: true},
				{Member: "first", Attr: "first", Kind: KindBool},
				{Member: "mode", Attr: "mode", Kind: KindString, Required: true},
			}}},
		{"nestedObject", `{"type": "object", "additionalProperties": false, "properties": {"inner": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}}}}}`,
			Field{Attr: "nested_object_json", Kind: KindJSON}},
		{"objectWithList", `{"type": "object", "additionalProperties": false, "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}`,
			Field{Attr: "object_with_list_json", Kind: KindJSON}},
		{"emptyClosed", `{"type": "object", "additionalProperties": false}`, Field{Attr: "empty_closed_json", Kind: KindJSON}},
		{"labels", `{"type": "object", "additionalProperties": {"type": "string"}}`, Field{Attr: "labels_json", Kind: KindJSON}},
		{"anything", `{}`, Field{Attr: "anything_json", Kind: KindJSON}},
	} {
		t.Run(c.member, func(t *testing.T) {
			c.want.Member = c.member
			if got := fieldOf(root, c.member, schemaDoc(t, c.node)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("fieldOf = %+v\nwant      %+v", got, c.want)
			}
		})
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"name": "name", "messageRetentionSeconds": "message_retention_seconds", "sqliteBindings": "sqlite_bindings",
		"serialURL": "serial_url", "URLPath": "url_path", "manifestDigest": "manifest_digest",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFieldAttribute: each field kind maps to its attribute type; required
// → Required, a declared default → Optional+Computed with the default
// materialised, else Optional; an immutable field requires replacement.
func TestFieldAttribute(t *testing.T) {
	nested := []Field{{Member: "path", Attr: "path", Kind: KindString, Required: true}, {Member: "maxAge", Attr: "max_age", Kind: KindInt64}}
	ruleType := types.ObjectType{AttrTypes: map[string]attr.Type{"path": types.StringType, "max_age": types.Int64Type}}
	bindingType := types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "target_name": types.StringType}}
	for _, c := range []struct {
		name    string
		f       Field
		typ     attr.Type
		flags   string // R, O or OC
		def     attr.Value
		replace bool
	}{
		{"required string", Field{Kind: KindString, Required: true}, types.StringType, "R", nil, false},
		{"optional string", Field{Kind: KindString}, types.StringType, "O", nil, false},
		{"string default", Field{Kind: KindString, HasDefault: true, Default: "eu"}, types.StringType, "OC", types.StringValue("eu"), false},
		{"immutable relation", Field{Kind: KindRelation, Required: true, Immutable: true}, types.StringType, "R", nil, true},
		{"json default", Field{Kind: KindJSON, HasDefault: true, Default: map[string]any{"b": json.Number("1"), "a": true}}, types.StringType, "OC", types.StringValue(`{"a":true,"b":1}`), false},
		{"int64 default", Field{Kind: KindInt64, HasDefault: true, Default: json.Number("30")}, types.Int64Type, "OC", types.Int64Value(30), false},
		{"int64 fractional default", Field{Kind: KindInt64, HasDefault: true, Default: json.Number("1.5")}, types.Int64Type, "OC", nil, false},
		{"immutable number", Field{Kind: KindNumber, Immutable: true}, types.Float64Type, "O", nil, true},
		{"number default", Field{Kind: KindNumber, HasDefault: true, Default: json.Number("0.25")}, types.Float64Type, "OC", types.Float64Value(0.25), false},
		{"bool default", Field{Kind: KindBool, HasDefault: true, Default: false}, types.BoolType, "OC", types.BoolValue(false), false},
		{"string set default", Field{Kind: KindStringSet, HasDefault: true, Default: []any{}}, types.SetType{ElemType: types.StringType}, "OC",
			types.SetValueMust(types.StringType, []attr.Value{}), false},
		{"string list", Field{Kind: KindStringList, Required: true, Immutable: true}, types.ListType{ElemType: types.StringType}, "R", nil, true},
		{"string list non-empty default", Field{Kind: KindStringList, HasDefault: true, Default: []any{"a"}}, types.ListType{ElemType: types.StringType}, "OC", nil, false},
		{"object list", Field{Kind: KindObjectList, Nested: nested, HasDefault: true, Default: []any{}}, types.ListType{ElemType: ruleType}, "OC",
			types.ListValueMust(ruleType, []attr.Value{}), false},
		{"binding list", Field{Kind: KindBindingList, Target: "Worker", Immutable: true}, types.ListType{ElemType: bindingType}, "O", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			a := fieldAttribute(c.f, false)
			if got, want := a.Type(), c.typ.TerraformType(ctx); !got.Equal(want) {
				t.Errorf("type %s, want %s", got, want)
			}
			if got := attrFlags(a); got != c.flags {
				t.Errorf("flags %s, want %s", got, c.flags)
			}
			var want *tftypes.Value
			if c.def != nil {
				v, err := c.def.ToTerraformValue(ctx)
				if err != nil {
					t.Fatal(err)
				}
				want = &v
			}
			if got := a.Default; (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) {
				t.Errorf("default %v, want %v", got, want)
			}
			if got := slices.Equal(a.Mods, []tfschema.Mod{tfschema.RequiresReplace}); got != c.replace {
				t.Errorf("requires replace %v, want %v", got, c.replace)
			}
			// the framework's attribute is the tree's, its default included
			fw := frameworkAttr(a)
			if !fw.GetType().Equal(c.typ) || attrFlags(a) != fwFlags(fw) {
				t.Errorf("framework attribute %T of type %s, flags %s", fw, fw.GetType(), fwFlags(fw))
			}
		})
	}
	// optionalComputed (a local bundle's manifest_digest): never Required
	if got := attrFlags(fieldAttribute(Field{Kind: KindString, Required: true}, true)); got != "OC" {
		t.Errorf("an optional-computed required field is %s", got)
	}
	nestedAttr := fieldAttribute(Field{Kind: KindObjectList, Nested: nested}, false)
	if nestedAttr.Kind != tfschema.ListNested || attrFlags(nestedAttr.Nested["path"]) != "R" || attrFlags(nestedAttr.Nested["max_age"]) != "O" {
		t.Errorf("nested members keep their own required-ness: %+v", nestedAttr.Nested)
	}
}

func attrFlags(a *tfschema.Attr) string {
	return flags(a.Required, a.Optional, a.Computed)
}

func fwFlags(a schema.Attribute) string {
	return flags(a.IsRequired(), a.IsOptional(), a.IsComputed())
}

func flags(required, optional, computed bool) string {
	switch {
	case required && !optional && !computed:
		return "R"
	case !required && optional && computed:
		return "OC"
	case !required && optional && !computed:
		return "O"
	}
	return "?"
}

// TestOutputAttribute: every declared output of the Edge types is a
// Computed attribute typed by its output schema node (integer → Int64,
// number → Float64, boolean → Bool, anything else a string) and described.
func TestOutputAttribute(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for name, ts := range reg.Types {
		doc, err := decodeRaw(ts.Create.Def.OutputSchemaJSON())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		props := mapOf(mapOf(doc)["properties"])
		for _, o := range ts.Create.Outputs {
			seen++
			var want attr.Type = types.StringType
			switch node := mapOf(props[o]); {
			case hasType(node, "integer"):
				want = types.Int64Type
			case hasType(node, "number"):
				want = types.Float64Type
			case hasType(node, "boolean"):
				want = types.BoolType
			}
			a := outputAttribute(ts.Create, o)
			if attrFlags(a) != "?" || !a.Computed || !a.Type().Equal(want.TerraformType(context.Background())) || a.Description == "" {
				t.Errorf("%s output %s: computed=%v optional=%v type %s (want %s) %q", name, o, a.Computed, a.Optional, a.Type(), want, a.Description)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Edge type declares an output")
	}
}
