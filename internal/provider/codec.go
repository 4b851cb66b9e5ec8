package provider

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Codec translates between a resource type's attributes and the desired
// spec and representation of ONE exact FormRef, from that definition's own
// declarations (decision 0017).
type Codec struct {
	Ref       form.FormRef
	Def       *form.Definition
	Fields    []Field
	Outputs   []string
	Canonical map[string]func(string) (string, error) // Exception.Canonical of the kind
	// contracts maps the Interface and Binding digests Def names to the
	// ones this identity names (a public equivalent's, addEquivalents).
	contracts map[string]string
}

// contractDigest is the digest under which this codec names an Interface
// or Binding its definition names as d: the public family's for a codec of
// a public equivalent identity (addEquivalents), else d itself.
func (c *Codec) contractDigest(d string) string {
	if m, ok := c.contracts[d]; ok {
		return m
	}
	return d
}

// NewCodec derives the codec of a definition.
func NewCodec(def *form.Definition) *Codec {
	return &Codec{Ref: def.Ref(), Def: def, Fields: Fields(def), Outputs: def.OutputNames(),
		Canonical: Exceptions[def.Ref().Kind].Canonical}
}

// Encode builds the desired spec from attribute values. Null attributes are
// omitted (the host materialises declared defaults); an unknown value is an
// error naming the attribute.
func (c *Codec) Encode(attrs map[string]any) (map[string]any, error) {
	return encodeFields(c.Fields, attrs)
}

func encodeFields(fields []Field, attrs map[string]any) (map[string]any, error) {
	spec := map[string]any{}
	for _, f := range fields {
		v, ok := attrs[f.Attr]
		if !ok || v == nil {
			continue
		}
		if !known(v) {
			return nil, fmt.Errorf("attribute %s is not known yet", f.Attr)
		}
		enc, err := encodeField(f, v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", f.Attr, err)
		}
		spec[f.Member] = enc
	}
	return spec, nil
}

func encodeField(f Field, v any) (any, error) {
	switch f.Kind {
	case KindString, KindBool:
		return v, nil
	case KindInt64:
		n, ok := v.(*big.Float)
		if !ok {
			return nil, fmt.Errorf("not a number")
		}
		i, acc := n.Int64()
		if acc != big.Exact {
			return nil, fmt.Errorf("%s is not a whole number", n.String())
		}
		return i, nil
	case KindNumber:
		n, _ := v.(*big.Float)
		f, _ := n.Float64()
		return f, nil
	case KindRelation:
		return relation(f, v.(string)), nil
	case KindStringSet, KindStringList:
		return v.([]any), nil
	case KindBindingList:
		var out []any
		for _, it := range v.([]any) {
			m, _ := it.(map[string]any)
			out = append(out, map[string]any{"name": m["name"], "resource": relation(f, str(m, "target_name"))})
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case KindObjectList:
		out := []any{}
		for _, it := range v.([]any) {
			m, _ := it.(map[string]any)
			enc, err := encodeFields(f.Nested, m)
			if err != nil {
				return nil, err
			}
			out = append(out, enc)
		}
		return out, nil
	case KindJSON:
		s, _ := v.(string)
		val, err := ijson.Decode([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("not strict JSON: %v", err)
		}
		return val, nil
	}
	return nil, fmt.Errorf("unhandled field kind %d", f.Kind)
}

func relation(f Field, name string) map[string]any {
	return map[string]any{"apiVersion": f.TargetAPI, "kind": f.Target, "name": name}
}

// Decode writes a resource's desired fields and envelope into attrs.
// prior holds the previous attribute values: a JSON attribute keeps its
// prior text while it still means the same document.
func (c *Codec) Decode(res *wire.Resource, attrs, prior map[string]any) error {
	spec, err := ijson.Decode(res.Spec)
	if err != nil {
		return fmt.Errorf("decode spec: %w", err)
	}
	sm, _ := spec.(map[string]any)
	for _, f := range c.Fields {
		pv := prior[f.Attr] // attrs and prior may be one map
		attrs[f.Attr] = decodeField(f, sm[f.Member], pv)
		if canon := c.Canonical[f.Member]; canon != nil {
			// the host stores the canonical form; keep the spelling the
			// configuration wrote while it still means the same value
			if p, ok := pv.(string); ok && p != attrs[f.Attr] {
				if cp, err := canon(p); err == nil && cp == attrs[f.Attr] {
					attrs[f.Attr] = p
				}
			}
		}
	}
	outputs := map[string]any{}
	if len(res.Status.Outputs) > 0 {
		v, err := ijson.Decode(res.Status.Outputs)
		if err != nil {
			return fmt.Errorf("decode outputs: %w", err)
		}
		outputs, _ = v.(map[string]any)
	}
	for _, name := range c.Outputs {
		v, ok := outputs[name]
		if !ok {
			return fmt.Errorf("the host answered without declared output %q", name)
		}
		attrs[snake(name)] = scalar(v)
	}
	writeHost(attrs, res, outputs)
	return nil
}

func decodeField(f Field, v, prior any) any {
	if v == nil {
		return nil
	}
	switch f.Kind {
	case KindString, KindBool:
		return v
	case KindInt64, KindNumber:
		return scalar(v)
	case KindRelation:
		return str(mapOf(v), "name")
	case KindStringSet, KindStringList:
		l, _ := v.([]any)
		if l == nil {
			l = []any{}
		}
		return l
	case KindBindingList:
		out := []any{}
		for _, it := range asList(v) {
			m := mapOf(it)
			out = append(out, map[string]any{"name": m["name"], "target_name": str(mapOf(m["resource"]), "name")})
		}
		return out
	case KindObjectList:
		out := []any{}
		for _, it := range asList(v) {
			m := mapOf(it)
			obj := map[string]any{}
			for _, n := range f.Nested {
				obj[n.Attr] = decodeField(n, m[n.Member], nil)
			}
			out = append(out, obj)
		}
		return out
	case KindJSON:
		text := canonicalText(v)
		if p, ok := prior.(string); ok && canonicalEqual(p, text) {
			return p
		}
		return text
	}
	return nil
}

// scalar converts a decoded JSON scalar to its attribute value.
func scalar(v any) any {
	if n, ok := v.(json.Number); ok {
		f, _, err := big.ParseFloat(n.String(), 10, 512, big.ToNearestEven)
		if err == nil {
			return f
		}
	}
	return v
}

func canonicalText(v any) string {
	b, _ := json.Marshal(v)
	c, err := ijson.Canonical(b)
	if err != nil {
		return string(b)
	}
	return string(c)
}

func canonicalEqual(a, b string) bool {
	ca, err1 := ijson.Canonical([]byte(a))
	cb, err2 := ijson.Canonical([]byte(b))
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// refList renders FormRefs for messages, sorted.
func refList(refs []form.FormRef) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

// foreign lists the attributes of t's schema that codec c has no desired
// member or declared output for: the type's schema comes from its default
// create definition, and a resource bound to another ref never has them.
func (t *TypeSpec) foreign(c *Codec) []string {
	if c == t.Create {
		return nil
	}
	own := map[string]bool{}
	for _, f := range c.Fields {
		own[f.Attr] = true
	}
	for _, o := range c.Outputs {
		own[snake(o)] = true
	}
	var out []string
	for _, f := range t.Create.Fields {
		if !own[f.Attr] {
			out = append(out, f.Attr)
		}
	}
	for _, o := range t.Create.Outputs {
		if !own[snake(o)] {
			out = append(out, snake(o))
		}
	}
	return out
}
