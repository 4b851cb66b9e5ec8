package provider

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// unknown marks a value not known until apply.
type unknown struct{}

// Unknown is the Go form of an unknown value.
var Unknown = unknown{}

// toGo converts a Terraform value to plain Go: objects and maps become
// map[string]any, lists, sets and tuples []any, numbers *big.Float,
// strings, bools; null is nil and unknown is Unknown.
func toGo(v tftypes.Value) (any, error) {
	if !v.IsKnown() {
		return Unknown, nil
	}
	if v.IsNull() {
		return nil, nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case t.Is(tftypes.Number):
		f := new(big.Float)
		err := v.As(&f)
		return f, err
	case t.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}), t.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case t.Is(tftypes.Object{}), t.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported Terraform type %s", t)
}

// fromGo builds a Terraform value of type t from plain Go (the inverse of
// toGo; int64, float64 and json.Number are accepted for numbers). Object attributes
// missing from a map are null.
func fromGo(t tftypes.Type, v any) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(t, nil), nil
	}
	if _, ok := v.(unknown); ok {
		return tftypes.NewValue(t, tftypes.UnknownValue), nil
	}
	switch {
	case t.Is(tftypes.String):
		if _, ok := v.(string); !ok {
			return tftypes.Value{}, fmt.Errorf("string value of Go type %T", v)
		}
		return tftypes.NewValue(t, v), nil
	case t.Is(tftypes.Bool):
		if _, ok := v.(bool); !ok {
			return tftypes.Value{}, fmt.Errorf("bool value of Go type %T", v)
		}
		return tftypes.NewValue(t, v), nil
	case t.Is(tftypes.Number):
		switch n := v.(type) {
		case *big.Float:
			return tftypes.NewValue(t, n), nil
		case int64:
			return tftypes.NewValue(t, new(big.Float).SetInt64(n)), nil
		case int:
			return tftypes.NewValue(t, new(big.Float).SetInt64(int64(n))), nil
		case float64:
			return tftypes.NewValue(t, big.NewFloat(n)), nil
		case json.Number: // parsed as tftypes parses a JSON number
			f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("number %q: %w", n, err)
			}
			return tftypes.NewValue(t, f), nil
		}
		return tftypes.Value{}, fmt.Errorf("number value of Go type %T", v)
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}):
		var et tftypes.Type
		switch c := t.(type) {
		case tftypes.List:
			et = c.ElementType
		case tftypes.Set:
			et = c.ElementType
		default:
			return tftypes.Value{}, fmt.Errorf("unsupported Terraform type %s", t)
		}
		items, ok := v.([]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("list value of Go type %T", v)
		}
		elems := make([]tftypes.Value, 0, len(items))
		for _, it := range items {
			e, err := fromGo(et, it)
			if err != nil {
				return tftypes.Value{}, err
			}
			elems = append(elems, e)
		}
		return tftypes.NewValue(t, elems), nil
	case t.Is(tftypes.Object{}):
		ot, ok := t.(tftypes.Object)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("unsupported Terraform type %s", t)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("object value of Go type %T", v)
		}
		vals := make(map[string]tftypes.Value, len(ot.AttributeTypes))
		for name, at := range ot.AttributeTypes {
			e, err := fromGo(at, m[name])
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
			}
			vals[name] = e
		}
		return tftypes.NewValue(t, vals), nil
	}
	return tftypes.Value{}, fmt.Errorf("unsupported Terraform type %s", t)
}

// known reports whether v and everything inside it is known.
func known(v any) bool {
	switch t := v.(type) {
	case unknown:
		return false
	case []any:
		for _, e := range t {
			if !known(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range t {
			if !known(e) {
				return false
			}
		}
	}
	return true
}

// str is the string attribute k of m; "" when it is absent, null, unknown
// or not a string.
func str(m map[string]any, k string) string { return stringOr(m[k]) }

// stringOr is v when it is a string, else "".
func stringOr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}
