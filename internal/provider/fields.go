package provider

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/takoform/takoform/form"
)

// Kind is how one desired field maps to a Terraform attribute. This file is
// the ONE place that decides it (terraform-surface.md "Field mapping").
type Kind int

// The field kinds.
const (
	KindString      Kind = iota // string → string
	KindInt64                   // integer → number (Int64)
	KindNumber                  // number → Float64
	KindBool                    // boolean → bool
	KindRelation                // {apiVersion, kind, name} → the target's name
	KindBindingList             // binding list → list of {name, target_name}
	KindJSON                    // open map or free JSON → "<field>_json" string
	KindStringSet               // unique scalar array → set of strings
	KindStringList              // other scalar array → list of strings
	KindObjectList              // array of objects → list of nested objects
	KindObject                  // closed object of scalar or relation members → single nested object
)

// Field is one desired member and its attribute.
type Field struct {
	Member     string // desired member name, e.g. "messageRetentionSeconds"
	Attr       string // attribute name, e.g. "message_retention_seconds"
	Kind       Kind
	Required   bool // required member → Required
	HasDefault bool // declared default → Optional+Computed, default materialised
	Default    any
	Immutable  bool   // immutable → RequiresReplace
	Target     string // relation target kind (KindRelation, KindBindingList)
	TargetAPI  string // relation target group
	Nested     []Field
	Doc        string // the member's description in the Form's desired schema (markdown); "" when it has none
}

// Fields derives the attribute mapping of a definition's desired schema.
// Unknown shapes degrade to KindJSON so any Form is representable.
func Fields(def *form.Definition) []Field {
	root := def.DesiredSchema()
	required := stringSet(root["required"])
	props := mapOf(root["properties"])
	defaults := def.Defaults()
	noUpdate := !def.Has(form.CapUpdate)
	var out []Field
	for _, name := range slices.Sorted(maps.Keys(props)) {
		node := mapOf(props[name])
		f := fieldOf(root, name, node)
		f.Required = required[name]
		if d, ok := defaults[name]; ok {
			f.HasDefault, f.Default = true, d
		}
		f.Immutable = noUpdate || def.IsImmutable(name)
		out = append(out, f)
	}
	return out
}

func fieldOf(root map[string]any, member string, node map[string]any) Field {
	doc := str(node, "description") // a description beside a $ref wins
	node = deref(root, node)
	if doc == "" {
		doc = str(node, "description")
	}
	f := Field{Member: member, Attr: snake(member), Doc: doc}
	switch {
	case isRelation(node):
		f.Kind = KindRelation
		f.Target, f.TargetAPI = constOf(node, "kind"), constOf(node, "apiVersion")
	case hasType(node, "array"):
		items := deref(root, mapOf(node["items"]))
		_, binding := node[form.AnnotationBinding]
		switch {
		case binding:
			f.Kind = KindBindingList
			res := deref(root, mapOf(mapOf(items["properties"])["resource"]))
			f.Target, f.TargetAPI = constOf(res, "kind"), constOf(res, "apiVersion")
		case isScalar(items) && node["uniqueItems"] == true:
			f.Kind = KindStringSet
		case isScalar(items):
			f.Kind = KindStringList
		case hasType(items, "object") && items["additionalProperties"] == false:
			f.Kind = KindObjectList
			req := stringSet(items["required"])
			props := mapOf(items["properties"])
			for _, n := range slices.Sorted(maps.Keys(props)) {
				sub := fieldOf(root, n, mapOf(props[n]))
				sub.Required = req[n]
				f.Nested = append(f.Nested, sub)
			}
		default:
			f.Kind, f.Attr = KindJSON, f.Attr+"_json"
		}
	case hasType(node, "object") && node["additionalProperties"] == false && len(mapOf(node["properties"])) > 0 && flatMembers(root, node):
		// a closed object of scalar and relation members, such as
		// WorkerVersion.assets (spec/lane-v1beta1.md §13.3)
		f.Kind = KindObject
		req := stringSet(node["required"])
		props := mapOf(node["properties"])
		for _, n := range slices.Sorted(maps.Keys(props)) {
			sub := fieldOf(root, n, mapOf(props[n]))
			sub.Required = req[n]
			f.Nested = append(f.Nested, sub)
		}
	case hasType(node, "object"):
		f.Kind, f.Attr = KindJSON, f.Attr+"_json"
	case hasType(node, "integer"):
		f.Kind = KindInt64
	case hasType(node, "number"):
		f.Kind = KindNumber
	case hasType(node, "boolean"):
		f.Kind = KindBool
	case hasType(node, "string"):
		f.Kind = KindString
	default:
		f.Kind, f.Attr = KindJSON, f.Attr+"_json"
	}
	return f
}

// flatMembers reports whether every member of an object node maps to a
// scalar attribute or a relation (KindObject holds no collections and no
// nested objects).
func flatMembers(root, n map[string]any) bool {
	for _, p := range mapOf(n["properties"]) {
		m := deref(root, mapOf(p))
		if !isRelation(m) && (hasType(m, "object") || hasType(m, "array") || !(hasType(m, "string") || hasType(m, "boolean") || hasType(m, "integer") || hasType(m, "number"))) {
			return false
		}
	}
	return true
}

func isRelation(n map[string]any) bool {
	if n["additionalProperties"] != false {
		return false
	}
	props := mapOf(n["properties"])
	req := stringSet(n["required"])
	return len(props) == 3 && len(req) == 3 && req["apiVersion"] && req["kind"] && req["name"] &&
		constOf(mapOf(props["apiVersion"]), "") != "" && constOf(mapOf(props["kind"]), "") != ""
}

// constOf returns the const of a node, or of its member when member != "".
func constOf(n map[string]any, member string) string {
	if member != "" {
		n = mapOf(mapOf(n["properties"])[member])
	}
	return str(n, "const")
}

func isScalar(n map[string]any) bool {
	return hasType(n, "string") && !hasType(n, "object") && !hasType(n, "array")
}

func hasType(n map[string]any, t string) bool {
	switch v := n["type"].(type) {
	case string:
		return v == t
	case []any:
		for _, x := range v {
			if x == t {
				return true
			}
		}
	}
	return false
}

// deref follows document-local $refs (form.ResolveLocalRef), at most 8.
func deref(root, n map[string]any) map[string]any {
	for i := 0; i < 8; i++ {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n
		}
		n = form.ResolveLocalRef(root, ref)
	}
	return n
}

// mapOf is v when it is an object, else nil.
func mapOf(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return nil
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	for _, x := range asList(v) {
		if s, ok := x.(string); ok {
			out[s] = true
		}
	}
	return out
}

// snake converts camelCase to snake_case ("messageRetentionSeconds" →
// "message_retention_seconds"; "sqliteBindings" → "sqlite_bindings").
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
