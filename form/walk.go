package form

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
)

// walkSchema checks one schema node and everything below it: closed
// objects at every node (or an open typed map with the field policy),
// arrays with items, only document-local $ref, no identity keywords, only
// known x-takoform annotations, and the data-only field vocabulary
// (spec/host-api-v1alpha3.md §6.1).
func walkSchema(v *verifier, at string, root, node map[string]any, isRoot bool) {
	for _, k := range forbiddenKeywords {
		if _, ok := node[k]; ok {
			v.add(pointerTo(at, k), "%s is not allowed: a Form schema is self-contained and names nothing outside itself", k)
		}
	}
	if _, ok := node["$schema"]; ok && !isRoot {
		v.add(at+"/$schema", "$schema belongs only at the root of an embedded schema")
	}
	if ref, ok := node["$ref"]; ok {
		s, _ := ref.(string)
		if !strings.HasPrefix(s, "#") || ResolveLocalRef(root, s) == nil {
			v.add(at+"/$ref", "$ref %q must point inside this schema (#/$defs/...)", s)
		}
	}
	for k, val := range node {
		if strings.HasPrefix(k, "x-takoform-") {
			checkAnnotation(v, at, k, val)
		}
	}
	types := schemaTypes(node)
	if types["object"] {
		checkObjectNode(v, at, node)
	}
	if types["array"] {
		if _, ok := node["items"]; !ok {
			if _, pre := node["prefixItems"]; !pre {
				v.add(at, "an array schema declares items")
			}
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if word := forbiddenFieldWord(name); word != "" {
				v.add(pointerTo(at, "properties", name), "field name %q means %s, which is never portable desired data (data-only vocabulary); rename it", name, word)
			}
		}
	}
	for _, k := range schemaKeywords {
		if sub, ok := node[k].(map[string]any); ok {
			walkSchema(v, at+"/"+k, root, sub, false)
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := node[k].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				if sub, ok := m[name].(map[string]any); ok {
					walkSchema(v, pointerTo(at, k, name), root, sub, false)
				}
			}
		}
	}
	for _, k := range schemaListKeywords {
		for i, s := range asList(node[k]) {
			if sub, ok := s.(map[string]any); ok {
				walkSchema(v, fmt.Sprintf("%s/%s/%d", at, k, i), root, sub, false)
			}
		}
	}
}

func checkObjectNode(v *verifier, at string, node map[string]any) {
	switch ap := node["additionalProperties"].(type) {
	case bool:
		if ap {
			v.add(at+"/additionalProperties", "objects are closed: set additionalProperties to false, or make it a typed map with propertyNames")
		}
	case map[string]any:
		pn, _ := node["propertyNames"].(map[string]any)
		if pn == nil || pn["type"] != "string" || pn["pattern"] != OpenMapKeyPattern || pn[AnnotationFieldPolicy] != FieldPolicy {
			v.add(at+"/propertyNames", "an open map declares propertyNames {type: string, pattern: %s, %s: %s}", OpenMapKeyPattern, AnnotationFieldPolicy, FieldPolicy)
		}
	default:
		v.add(at, "objects are closed: add additionalProperties: false")
	}
	if _, ok := node["patternProperties"]; ok {
		v.add(at+"/patternProperties", "patternProperties opens an object; use properties or a typed map")
	}
}

func checkAnnotation(v *verifier, at, key string, val any) {
	ptr := pointerTo(at, key)
	switch key {
	case AnnotationBinding:
		s, _ := val.(string)
		if !bindingNamePattern.MatchString(s) {
			v.add(ptr, "%s names a Binding contract such as module-worker.edge-kv", key)
		}
	case AnnotationTargetFormRefs:
		refs := asList(val)
		if len(refs) == 0 {
			v.add(ptr, "%s lists at least one exact FormRef", key)
		}
		for i, r := range refs {
			if _, err := formRefFromJSON(r); err != nil {
				v.add(fmt.Sprintf("%s/%d", ptr, i), "%v", err)
			}
		}
	case AnnotationRequiredInterface:
		if _, err := interfaceRefFromJSON(val); err != nil {
			v.add(ptr, "%v", err)
		}
	case AnnotationFieldPolicy:
		if val != FieldPolicy || !strings.HasSuffix(at, "/propertyNames") {
			v.add(ptr, "%s is %q and belongs on propertyNames", key, FieldPolicy)
		}
	default:
		v.add(ptr, "unknown annotation %s; known: %s, %s, %s, %s", key, AnnotationBinding, AnnotationTargetFormRefs, AnnotationRequiredInterface, AnnotationFieldPolicy)
	}
}

func schemaTypes(node map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := node["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// ResolveLocalRef resolves a document-local $ref ("#", "#/$defs/x") inside
// the schema root; nil when it points nowhere or outside the document.
func ResolveLocalRef(root map[string]any, ref string) map[string]any {
	if ref == "#" {
		return root
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = root
	for tok := range jsontext.Pointer(ref[1:]).Tokens() {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, _ := cur.(map[string]any)
	return m
}

// forbiddenWords are the words of the data-only vocabulary policy: a
// desired field meaning one of these is never portable desired state
// (spec/host-api-v1alpha3.md §6.1). Matched against the lower-cased words of a field name.
var forbiddenWords = map[string]string{
	"secret": "a secret", "password": "a password", "passphrase": "a password",
	"credential": "a credential", "token": "a token", "apikey": "a credential",
	"accesskey": "a credential", "privatekey": "a credential", "account": "an account",
	"region": "a region", "price": "a price", "pricing": "a price", "sku": "a SKU",
	"executable": "an executable",
}

// forbiddenFieldWord returns what a field name means if it is in the
// forbidden vocabulary, else "".
func forbiddenFieldWord(name string) string {
	words := splitWords(name)
	for i, w := range words {
		if m := forbiddenWords[strings.TrimSuffix(w, "s")]; m != "" {
			return m
		}
		if i+1 < len(words) {
			if m := forbiddenWords[w+strings.TrimSuffix(words[i+1], "s")]; m != "" {
				return m
			}
		}
	}
	return ""
}

func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = nil
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 && !unicode.IsUpper(cur[len(cur)-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
