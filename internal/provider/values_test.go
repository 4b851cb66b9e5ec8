package provider

import (
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestValueConversions: every Terraform type the provider maps converts
// to plain Go (toGo) and back (fromGo) to the same value, null as nil and
// unknown as Unknown, at the top level and inside collections.
func TestValueConversions(t *testing.T) {
	str, num, boo := tftypes.String, tftypes.Number, tftypes.Bool
	list, set := tftypes.List{ElementType: str}, tftypes.Set{ElementType: str}
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"s": str, "n": num, "l": list}}
	nested := tftypes.List{ElementType: obj}
	cases := []struct {
		name string
		typ  tftypes.Type
		val  any // the tftypes value
		want any // its Go form
	}{
		{"string", str, "héllo", "héllo"},
		{"empty string", str, "", ""},
		{"whole number", num, big.NewFloat(42), big.NewFloat(42)},
		{"fraction", num, big.NewFloat(-1.5), big.NewFloat(-1.5)},
		{"bool", boo, true, true},
		{"list", list, []tftypes.Value{tftypes.NewValue(str, "a"), tftypes.NewValue(str, "b")}, []any{"a", "b"}},
		{"empty list", list, []tftypes.Value{}, []any{}},
		{"list with a null and an unknown", list, []tftypes.Value{tftypes.NewValue(str, nil), tftypes.NewValue(str, tftypes.UnknownValue)}, []any{nil, Unknown}},
		{"set", set, []tftypes.Value{tftypes.NewValue(str, "x")}, []any{"x"}},
		{"object", obj, map[string]tftypes.Value{
			"s": tftypes.NewValue(str, "v"), "n": tftypes.NewValue(num, big.NewFloat(3)),
			"l": tftypes.NewValue(list, []tftypes.Value{tftypes.NewValue(str, "e")}),
		}, map[string]any{"s": "v", "n": big.NewFloat(3), "l": []any{"e"}}},
		{"object with null and unknown members", obj, map[string]tftypes.Value{
			"s": tftypes.NewValue(str, nil), "n": tftypes.NewValue(num, tftypes.UnknownValue), "l": tftypes.NewValue(list, nil),
		}, map[string]any{"s": nil, "n": Unknown, "l": nil}},
		{"list of objects", nested, []tftypes.Value{tftypes.NewValue(obj, map[string]tftypes.Value{
			"s": tftypes.NewValue(str, "a"), "n": tftypes.NewValue(num, nil), "l": tftypes.NewValue(list, []tftypes.Value{}),
		})}, []any{map[string]any{"s": "a", "n": nil, "l": []any{}}}},
	}
	for _, c := range cases {
		for _, v := range []struct {
			name string
			val  tftypes.Value
			want any
		}{
			{c.name, tftypes.NewValue(c.typ, c.val), c.want},
			{c.name + " (null)", tftypes.NewValue(c.typ, nil), nil},
			{c.name + " (unknown)", tftypes.NewValue(c.typ, tftypes.UnknownValue), Unknown},
		} {
			t.Run(v.name, func(t *testing.T) {
				got, err := toGo(v.val)
				if err != nil {
					t.Fatalf("toGo: %v", err)
				}
				if !sameGo(got, v.want) {
					t.Fatalf("toGo = %#v, want %#v", got, v.want)
				}
				back, err := fromGo(c.typ, got)
				if err != nil {
					t.Fatalf("fromGo: %v", err)
				}
				if !back.Equal(v.val) {
					t.Errorf("fromGo(toGo(v)) = %s, want %s", back, v.val)
				}
			})
		}
	}
}

// TestFromGoNumbers: int64, int and float64 are numbers too.
func TestFromGoNumbers(t *testing.T) {
	for _, v := range []any{int64(7), 7, float64(7), big.NewFloat(7)} {
		got, err := fromGo(tftypes.Number, v)
		if err != nil || !got.Equal(tftypes.NewValue(tftypes.Number, big.NewFloat(7))) {
			t.Errorf("%T: %s, %v", v, got, err)
		}
	}
}

// TestFromGoRefusals: a Go value of the wrong shape for its type is an
// error naming the Go type (and the object member it sits in), never a
// silently wrong value; a type the provider does not map is refused.
func TestFromGoRefusals(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"s": tftypes.String}}
	for _, c := range []struct {
		name string
		typ  tftypes.Type
		val  any
		want string
	}{
		{"string from int", tftypes.String, 1, "string value of Go type int"},
		{"bool from string", tftypes.Bool, "true", "bool value of Go type string"},
		{"number from string", tftypes.Number, "1", "number value of Go type string"},
		{"list from map", tftypes.List{ElementType: tftypes.String}, map[string]any{}, "list value of Go type map[string]interface {}"},
		{"set element", tftypes.Set{ElementType: tftypes.String}, []any{true}, "string value of Go type bool"},
		{"object from list", obj, []any{}, "object value of Go type []interface {}"},
		{"object member", obj, map[string]any{"s": 2.5}, "s: string value of Go type float64"},
		{"map", tftypes.Map{ElementType: tftypes.String}, map[string]any{"k": "v"}, "unsupported Terraform type"},
		{"tuple", tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String}}, []any{"v"}, "unsupported Terraform type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := fromGo(c.typ, c.val)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("fromGo(%s, %#v) = %v, want an error containing %q", c.typ, c.val, err, c.want)
			}
		})
	}
}

// TestToGoMapsAndTuples: the types only frozen layouts hold (a map, a
// tuple) still read as plain Go.
func TestToGoMapsAndTuples(t *testing.T) {
	m := tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"k": tftypes.NewValue(tftypes.String, "v")})
	tu := tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Bool}},
		[]tftypes.Value{tftypes.NewValue(tftypes.String, "a"), tftypes.NewValue(tftypes.Bool, false)})
	if got, err := toGo(m); err != nil || !reflect.DeepEqual(got, map[string]any{"k": "v"}) {
		t.Errorf("map: %#v, %v", got, err)
	}
	if got, err := toGo(tu); err != nil || !reflect.DeepEqual(got, []any{"a", false}) {
		t.Errorf("tuple: %#v, %v", got, err)
	}
}

func TestKnown(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{"s", true}, {nil, true}, {Unknown, false},
		{[]any{"a", nil}, true}, {[]any{"a", Unknown}, false},
		{map[string]any{"a": []any{map[string]any{"b": Unknown}}}, false},
		{map[string]any{"a": []any{map[string]any{"b": 1}}}, true},
	} {
		if got := known(c.v); got != c.want {
			t.Errorf("known(%#v) = %v", c.v, got)
		}
	}
}

// sameGo is reflect.DeepEqual with numbers compared by value.
func sameGo(a, b any) bool {
	switch x := a.(type) {
	case *big.Float:
		y, ok := b.(*big.Float)
		return ok && x.Cmp(y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameGo(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if yv, ok := y[k]; !ok || !sameGo(x[k], yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
