package form

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Relation is one reference field derived from a desired schema (spec/host-api-v1alpha3.md
// §5.5): a closed object node requiring exactly apiVersion, kind and name,
// with apiVersion and kind const. Pointer uses "*" for array elements,
// e.g. "/versions/*/workerVersion".
type Relation struct {
	Pointer    string
	APIVersion string // the const target group
	Kind       string // the const target kind
	// Exactly one of TargetFormRefs and RequiredInterface is set.
	TargetFormRefs    []FormRef
	RequiredInterface *InterfaceRef
	// Binding is the x-takoform-binding contract name of the binding list
	// this relation sits in ("" outside binding lists); BindingList is that
	// list's top-level field name.
	Binding     string
	BindingList string
}

// Target is the relation value found in a spec: {apiVersion, kind, name}.
type Target struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

// Reference is one relation occurrence in a concrete spec.
type Reference struct {
	Relation *Relation
	Pointer  string // concrete pointer, e.g. "/versions/1/workerVersion"
	Target   Target
	// BindingName is the binding instance's name member, for relations in a
	// binding list.
	BindingName string
}

func deriveRelations(v *verifier, root map[string]any) []Relation {
	var out []Relation
	var walk func(node map[string]any, schemaAt, ptr, binding, bindingList string, depth int)
	walk = func(node map[string]any, schemaAt, ptr, binding, bindingList string, depth int) {
		if depth > 64 {
			return
		}
		if ref, ok := node["$ref"].(string); ok {
			if target := ResolveLocalRef(root, ref); target != nil {
				walk(target, schemaAt, ptr, binding, bindingList, depth+1)
			}
		}
		_, hasTargets := node[AnnotationTargetFormRefs]
		_, hasIface := node[AnnotationRequiredInterface]
		if apiV, kind, ok := relationShape(node); ok {
			r := Relation{Pointer: ptr, APIVersion: apiV, Kind: kind, Binding: binding, BindingList: bindingList}
			switch {
			case hasTargets && hasIface:
				v.add(schemaAt, "relation %s carries both %s and %s; keep exactly one", ptr, AnnotationTargetFormRefs, AnnotationRequiredInterface)
			case !hasTargets && !hasIface:
				v.add(schemaAt, "relation %s carries no target contract; add %s or %s", ptr, AnnotationTargetFormRefs, AnnotationRequiredInterface)
			case hasTargets:
				for i, raw := range asList(node[AnnotationTargetFormRefs]) {
					ref, err := formRefFromJSON(raw)
					if err != nil {
						continue // reported by walkSchema
					}
					if ref.APIVersion != apiV || ref.Kind != kind {
						v.add(fmt.Sprintf("%s/%s/%d", schemaAt, AnnotationTargetFormRefs, i), "target FormRef %s is not of the relation's %s %s", ref, apiV, kind)
					}
					r.TargetFormRefs = append(r.TargetFormRefs, ref)
				}
			default:
				if ref, err := interfaceRefFromJSON(node[AnnotationRequiredInterface]); err == nil {
					r.RequiredInterface = &ref
				}
			}
			out = append(out, r)
			return
		}
		if hasTargets || hasIface {
			v.add(schemaAt, "target contract annotations belong on a relation node {apiVersion, kind, name} with const apiVersion and kind")
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(props)) {
				sub, ok := props[name].(map[string]any)
				if !ok {
					continue
				}
				b, bl := binding, bindingList
				if s, ok := sub[AnnotationBinding].(string); ok {
					b = s
					if bl == "" {
						bl = name
					}
				}
				walk(sub, pointerTo(schemaAt, "properties", name), pointerTo(ptr, name), b, bl, depth+1)
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, schemaAt+"/items", ptr+"/*", binding, bindingList, depth+1)
		}
	}
	walk(root, "/desiredSchema", "", "", "", 0)
	for _, r := range out {
		if r.Binding != "" && r.RequiredInterface == nil {
			v.add("/desiredSchema", "binding relation %s must require an interface (%s)", r.Pointer, AnnotationRequiredInterface)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// relationShape reports whether node is a relation: a closed object whose
// required members are exactly apiVersion, kind and name, with apiVersion
// and kind const strings.
func relationShape(node map[string]any) (apiVersion, kind string, ok bool) {
	if node["additionalProperties"] != false {
		return "", "", false
	}
	req := asList(node["required"])
	if len(req) != 3 {
		return "", "", false
	}
	want := map[any]bool{"apiVersion": true, "kind": true, "name": true}
	for _, r := range req {
		if !want[r] {
			return "", "", false
		}
		delete(want, r)
	}
	props, _ := node["properties"].(map[string]any)
	if len(props) != 3 {
		return "", "", false
	}
	a, _ := props["apiVersion"].(map[string]any)
	k, _ := props["kind"].(map[string]any)
	apiVersion, ok1 := a["const"].(string)
	kind, ok2 := k["const"].(string)
	return apiVersion, kind, ok1 && ok2
}

// References finds every relation occurrence in spec (a decoded desired
// spec), in relation order then array order.
func (d *Definition) References(spec any) []Reference {
	var out []Reference
	for i := range d.relations {
		r := &d.relations[i]
		tokens := slices.Collect(jsontext.Pointer(r.Pointer).Tokens())
		var visit func(node any, toks []string, at string, parent map[string]any)
		visit = func(node any, toks []string, at string, parent map[string]any) {
			if len(toks) == 0 {
				m, ok := node.(map[string]any)
				if !ok {
					return
				}
				t := Target{}
				t.APIVersion, _ = m["apiVersion"].(string)
				t.Kind, _ = m["kind"].(string)
				t.Name, _ = m["name"].(string)
				ref := Reference{Relation: r, Pointer: at, Target: t}
				if r.Binding != "" && parent != nil {
					ref.BindingName, _ = parent["name"].(string)
				}
				out = append(out, ref)
				return
			}
			if toks[0] == "*" {
				for j, el := range asList(node) {
					visit(el, toks[1:], at+"/"+strconv.Itoa(j), parent)
				}
				return
			}
			m, ok := node.(map[string]any)
			if !ok {
				return
			}
			child, ok := m[toks[0]]
			if !ok {
				return
			}
			visit(child, toks[1:], pointerTo(at, toks[0]), m)
		}
		visit(spec, tokens, "", nil)
	}
	return out
}

func formRefFromJSON(v any) (FormRef, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 4 {
		return FormRef{}, fmt.Errorf("a FormRef is an object of exactly apiVersion, kind, definitionVersion, schemaDigest")
	}
	var r FormRef
	r.APIVersion, _ = m["apiVersion"].(string)
	r.Kind, _ = m["kind"].(string)
	r.DefinitionVersion, _ = m["definitionVersion"].(string)
	r.SchemaDigest, _ = m["schemaDigest"].(string)
	return r, r.Validate()
}

func interfaceRefFromJSON(v any) (InterfaceRef, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 4 {
		return InterfaceRef{}, fmt.Errorf("an InterfaceRef is an object of exactly apiVersion, name, version, schemaDigest")
	}
	var r InterfaceRef
	r.APIVersion, _ = m["apiVersion"].(string)
	r.Name, _ = m["name"].(string)
	r.Version, _ = m["version"].(string)
	r.SchemaDigest, _ = m["schemaDigest"].(string)
	return r, r.Validate()
}
