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
		n, ok := v.(*big.Float)
		if !ok {
			return nil, fmt.Errorf("not a number")
		}
		x, _ := n.Float64() // the nearest float64: what a JSON number in the spec carries
		return x, nil
	case KindRelation:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("not a string")
		}
		return relation(f, s), nil
	case KindStringSet, KindStringList:
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("not a list")
		}
		return l, nil
	case KindBindingList, KindObjectList:
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("not a list")
		}
		out := make([]any, 0, len(l))
		for i, it := range l {
			m, ok := it.(map[string]any)
			if !ok && it != nil {
				return nil, fmt.Errorf("element %d is not an object", i)
			}
			if f.Kind == KindBindingList {
				out = append(out, map[string]any{"name": m["name"], "resource": relation(f, str(m, "target_name"))})
				continue
			}
			enc, err := encodeFields(f.Nested, m)
			if err != nil {
				return nil, err
			}
			out = append(out, enc)
		}
		return out, nil
	case KindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		return encodeFields(f.Nested, m)
	case KindJSON:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("not a string")
		}
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
	sm, ok := spec.(map[string]any)
	if !ok && spec != nil {
		return fmt.Errorf("the spec is a JSON %T, not an object", spec)
	}
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
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return fmt.Errorf("the outputs are a JSON %T, not an object", v)
		}
		outputs = m
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
		l := asList(v)
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
			out = append(out, decodeObject(f, mapOf(it)))
		}
		return out
	case KindObject:
		return decodeObject(f, mapOf(v))
	case KindJSON:
		text := canonicalText(v)
		if p, ok := prior.(string); ok && canonicalEqual(p, text) {
			return p
		}
		return text
	}
	return nil
}

// decodeObject is the attribute value of one object member m of f (an
// element of an object list, or a single object).
func decodeObject(f Field, m map[string]any) map[string]any {
	obj := map[string]any{}
	for _, n := range f.Nested {
		obj[n.Attr] = decodeField(n, m[n.Member], nil)
	}
	return obj
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

// canonicalText is the canonical JSON text (ijson.Canonical) of v, a
// document ijson decoded or a declared default: built of maps, lists,
// strings, bools, nil and json.Number, which always marshal.
func canonicalText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("provider: a decoded JSON document does not marshal: %v", err))
	}
	return canonicalBytes(b)
}

// canonicalBytes is the canonical form of the JSON text b, or b itself
// when ijson does not canonicalise it.
func canonicalBytes(b []byte) string {
	c, err := ijson.Canonical(b)
	if err != nil {
		return string(b)
	}
	return string(c)
}

// sameSpec reports whether two encoded specs are one document; comparable
// is false when either holds what JSON cannot carry (a number beyond
// float64, encoded as an infinity).
func sameSpec(a, b map[string]any) (same, comparable bool) {
	ta, errA := json.Marshal(a)
	tb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false, false
	}
	return canonicalBytes(ta) == canonicalBytes(tb), true
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

// asList is v when it is a list, else nil.
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
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
// create definition (and SchemaFields), and a resource bound to another
// ref never has them.
func (t *TypeSpec) foreign(c *Codec) []string {
	own := map[string]bool{}
	for _, f := range c.Fields {
		own[f.Attr] = true
	}
	for _, o := range c.Outputs {
		own[snake(o)] = true
	}
	var out []string
	for _, f := range t.SchemaFields {
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
