package source

import "unicode"

// formSpec is everything that varies between the family's Forms; build turns
// it into a Definition (spec/host-api-v1alpha3.md §6.1) plus fixture files.
type formSpec struct {
	kind, dir, role string
	title           string // document title
	description     string // document and desiredSchema description
	desiredTitle    string
	properties      M
	required        []string
	defs            M // desiredSchema $defs, if any
	immutable       []string
	update          bool // adds the update lifecycle capability
	provides        []InterfaceRef
	accepts         []BindingRef
	output          M // outputSchema, if any
	canonical       M
	negatives       []negative
}

// negative is one refused desired fixture: reject-<suffix> reading
// fixtures/negative-<suffix>.json.
type negative struct {
	suffix string
	value  M
}

func (e Edition) build(s formSpec) Form {
	desired := about(closed(s.properties, s.required...), s.description)
	desired["title"] = s.desiredTitle
	if s.defs != nil {
		desired["$defs"] = s.defs
	}
	caps := []string{"create", "read", "delete", "import", "observe"}
	if s.update {
		caps = []string{"create", "read", "update", "delete", "import", "observe"}
	}
	doc := M{
		"apiVersion":            e.Group,
		"kind":                  s.kind,
		"definitionVersion":     DefinitionVersion,
		"title":                 s.title,
		"description":           s.description,
		"role":                  s.role,
		"desiredSchema":         root(desired),
		"lifecycleCapabilities": list(caps...),
		"conformanceFixtures": []any{
			M{"name": "canonical", "desiredPath": "fixtures/desired.json"},
		},
	}
	if len(s.immutable) > 0 {
		doc["immutableFields"] = list(s.immutable...)
	}
	if len(s.provides) > 0 {
		refs := make([]any, len(s.provides))
		for i, r := range s.provides {
			refs[i] = r
		}
		doc["providedInterfaces"] = refs
	}
	if len(s.accepts) > 0 {
		refs := make([]any, len(s.accepts))
		for i, r := range s.accepts {
			refs[i] = r
		}
		doc["acceptedBindings"] = refs
	}
	if s.output != nil {
		doc["outputSchema"] = root(s.output)
	}
	fixtures := []Fixture{{Path: "fixtures/desired.json", Value: s.canonical}}
	var rejects []any
	for _, n := range s.negatives {
		path := "fixtures/negative-" + n.suffix + ".json"
		rejects = append(rejects, M{
			"name":            "reject-" + n.suffix,
			"stage":           "desired",
			"inputPath":       path,
			"expectedFailure": "schema_validation_failed",
		})
		fixtures = append(fixtures, Fixture{Path: path, Value: n.value})
	}
	doc["negativeConformanceFixtures"] = rejects
	return Form{Kind: s.kind, Dir: s.dir, Role: s.role, Doc: doc, Fixtures: fixtures}
}

// Relations (spec/host-api-v1alpha3.md §5.5): a closed {apiVersion, kind, name} node whose first
// two members are const, annotated with exactly one target contract.

func resourceName() M {
	return with(text(1, 63), "pattern", "^[a-z][a-z0-9-]{0,62}$")
}

func (e Edition) relationNode(kind string) M {
	return closed(M{
		"apiVersion": with(M{"type": "string"}, "const", e.Group),
		"kind":       with(M{"type": "string"}, "const", kind),
		"name":       resourceName(),
	}, "apiVersion", "kind", "name")
}

// relationVia refers to a resource of kind that must provide the Interface.
func (e Edition) relationVia(kind string, required InterfaceRef) M {
	return with(e.relationNode(kind), "x-takoform-required-interface", required)
}

// relationTo refers to a resource recorded under the exact FormRef of kind.
func (e Edition) relationTo(kind string) M {
	return with(e.relationNode(kind), "x-takoform-target-formrefs", []any{FormRef{Kind: kind}})
}

// Fixture values.

func (e Edition) ref(kind, name string) M {
	return M{"apiVersion": e.Group, "kind": kind, "name": name}
}

// clone deep-copies a JSON value built from M, []any and scalars.
func clone(v any) any {
	switch t := v.(type) {
	case M:
		out := make(M, len(t))
		for k, x := range t {
			out[k] = clone(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = clone(x)
		}
		return out
	default:
		return v
	}
}

// set returns a copy of base with the member at path (object keys or array
// indexes) replaced by value.
func set(base M, value any, path ...any) M {
	out := clone(base).(M)
	var cur any = out
	for i, p := range path {
		last := i == len(path)-1
		switch key := p.(type) {
		case string:
			if last {
				cur.(M)[key] = value
			} else {
				cur = cur.(M)[key]
			}
		case int:
			if last {
				cur.([]any)[key] = value
			} else {
				cur = cur.([]any)[key]
			}
		}
	}
	return out
}

func unexpectedProperty(base M) negative {
	return negative{"unexpected-property", set(base, true, "takoformUnexpected")}
}

func missing(base M, field string) negative {
	out := clone(base).(M)
	delete(out, field)
	return negative{"missing-" + kebab(field), out}
}

func invalid(base M, field string, value any) negative {
	return negative{kebab(field), set(base, value, field)}
}

// badName replaces the target name of the relation at field.
func badName(base M, field string) negative {
	return negative{kebab(field), set(base, "Not A Resource Name", field, "name")}
}

func kebab(s string) string {
	var out []rune
	for _, r := range s {
		if unicode.IsUpper(r) {
			out = append(out, '-', unicode.ToLower(r))
			continue
		}
		out = append(out, r)
	}
	return string(out)
}
