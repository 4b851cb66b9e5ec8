package form

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/takoform/takoform/ijson"
)

// Draft202012 is the only $schema an embedded schema may name (spec/host-api-v1alpha3.md §6.1).
const Draft202012 = "https://json-schema.org/draft/2020-12/schema"

// FieldPolicy is the only x-takoform-fieldPolicy value: the keys of an open
// typed map are portable data, never credentials (spec/host-api-v1alpha3.md §6.1).
const FieldPolicy = "portable-data-only-v1"

// OpenMapKeyPattern is the propertyNames pattern an open typed map must carry.
const OpenMapKeyPattern = `^[A-Za-z][A-Za-z0-9._-]{0,63}$`

// The annotations a desired schema may carry (spec/host-api-v1alpha3.md §6.1).
const (
	AnnotationBinding           = "x-takoform-binding"
	AnnotationTargetFormRefs    = "x-takoform-target-formrefs"
	AnnotationRequiredInterface = "x-takoform-required-interface"
	AnnotationFieldPolicy       = "x-takoform-fieldPolicy"
)

var (
	fixtureNamePattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`)
	expectedFailurePattern = regexp.MustCompile(`^[a-z][a-z0-9._-]{2,127}$`)
	packagePathPattern     = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
	dotSegmentPattern      = regexp.MustCompile(`(^|/)\.\.?($|/)`)
	// Keywords that would make a schema depend on something outside its
	// own document (spec/host-api-v1alpha3.md §6.1).
	forbiddenKeywords = []string{"$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary"}
	// Subschema-bearing keywords the verifier walks: single schemas, then
	// maps of schemas, then lists of schemas.
	schemaKeywords     = []string{"items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains", "unevaluatedItems", "unevaluatedProperties"}
	schemaMapKeywords  = []string{"properties", "$defs", "patternProperties", "dependentSchemas"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	baseCapabilities   = []Capability{CapCreate, CapRead, CapDelete, CapImport, CapObserve}
	knownCapabilities  = map[Capability]bool{CapCreate: true, CapRead: true, CapUpdate: true, CapDelete: true, CapImport: true, CapObserve: true, CapRefresh: true}
	knownRoles         = map[Role]bool{RoleIdentity: true, RoleRevision: true, RoleDeployment: true, RoleAttachment: true, RolePolicy: true}
)

type verifier struct{ problems []Problem }

func (v *verifier) add(ptr, format string, args ...any) {
	v.problems = append(v.problems, Problem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

func (v *verifier) err(ref FormRef) error {
	return &DefinitionError{Ref: ref, Problems: v.problems}
}

func (d *Definition) verify(v *verifier) {
	doc := &d.doc
	if err := ValidateAPIVersion(doc.APIVersion); err != nil {
		v.add("/apiVersion", "%v", err)
	}
	if err := ValidateKind(doc.Kind); err != nil {
		v.add("/kind", "%v", err)
	}
	if !matchSemver(doc.DefinitionVersion) {
		v.add("/definitionVersion", "%q is not a SemVer 2.0.0 version; write e.g. 0.1.0", doc.DefinitionVersion)
	}
	if n := utf8.RuneCountInString(deref(doc.Title)); doc.Title == nil || n < 1 || n > 160 {
		v.add("/title", "title is required and must be 1..160 characters")
	}
	if doc.Description != nil && utf8.RuneCountInString(*doc.Description) > 4096 {
		v.add("/description", "description is longer than 4096 characters; shorten it")
	}
	if !knownRoles[doc.Role] {
		v.add("/role", "role %q is not one of identity, revision, deployment, attachment, policy", doc.Role)
	}
	d.verifyCapabilities(v)
	d.verifyDesired(v)
	d.verifyOutput(v)
	if len(doc.ObservedSchema) > 0 {
		if obs := decodeSchema(v, "/observedSchema", doc.ObservedSchema); obs != nil {
			walkSchema(v, "/observedSchema", obs, obs, true)
		}
	}
	d.verifyImmutable(v)
	d.verifyContracts(v)
	d.verifyFixtures(v)
	if len(v.problems) == 0 {
		d.compile(v)
	}
}

func (d *Definition) verifyCapabilities(v *verifier) {
	d.caps = map[Capability]bool{}
	if len(d.doc.LifecycleCapabilities) == 0 {
		v.add("/lifecycleCapabilities", "lifecycleCapabilities is required; list at least create, read, delete, import, observe")
	}
	for i, c := range d.doc.LifecycleCapabilities {
		p := fmt.Sprintf("/lifecycleCapabilities/%d", i)
		switch {
		case !knownCapabilities[c]:
			v.add(p, "capability %q is unknown; use create, read, update, delete, import or observe", c)
		case c == CapRefresh:
			v.add(p, "capability refresh belongs to older lanes; a v1alpha3 Form uses observe")
		case d.caps[c]:
			v.add(p, "capability %q is listed twice", c)
		}
		d.caps[c] = true
	}
	for _, c := range baseCapabilities {
		if !d.caps[c] {
			v.add("/lifecycleCapabilities", "capability %q is missing; every Form declares create, read, delete, import and observe", c)
		}
	}
}

func (d *Definition) verifyDesired(v *verifier) {
	if len(d.doc.DesiredSchema) == 0 {
		v.add("/desiredSchema", "desiredSchema is required")
		return
	}
	d.desired = decodeSchema(v, "/desiredSchema", d.doc.DesiredSchema)
	if d.desired == nil {
		return
	}
	if t, _ := d.desired["type"].(string); t != "object" {
		v.add("/desiredSchema/type", "the desired schema must describe an object (type: object)")
	}
	props, _ := d.desired["properties"].(map[string]any)
	if _, ok := props["name"]; ok {
		v.add("/desiredSchema/properties/name", "desired state never has a name property: metadata.name is the only name (decision 0011); remove it")
	}
	walkSchema(v, "/desiredSchema", d.desired, d.desired, true)
	d.defaults = map[string]any{}
	for name, p := range props {
		if ps, ok := p.(map[string]any); ok {
			if def, ok := ps["default"]; ok {
				d.defaults[name] = def
			}
		}
	}
	d.relations = deriveRelations(v, d.desired)
}

func (d *Definition) verifyOutput(v *verifier) {
	if len(d.doc.OutputSchema) == 0 {
		return
	}
	d.output = decodeSchema(v, "/outputSchema", d.doc.OutputSchema)
	if d.output == nil {
		return
	}
	const at = "/outputSchema"
	walkSchema(v, at, d.output, d.output, true)
	if t, _ := d.output["type"].(string); t != "object" {
		v.add(at+"/type", "declared outputs are an object (type: object)")
	}
	props, _ := d.output["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asList(d.output["required"]) {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	for name, p := range props {
		ps, _ := p.(map[string]any)
		ptr := pointerTo(at, "properties", name)
		if !required[name] {
			v.add(ptr, "every declared output is required (decision 0025); add %q to required", name)
		}
		t, _ := ps["type"].(string)
		if t != "string" && t != "integer" && t != "number" && t != "boolean" {
			v.add(ptr+"/type", "a declared output is a single scalar type (string, integer, number or boolean)")
		}
		if _, ok := ps["default"]; ok {
			v.add(ptr+"/default", "outputs are not desired state and carry no default")
		}
		for k := range ps {
			if strings.HasPrefix(k, "x-takoform-") || k == "$ref" {
				v.add(pointerTo(ptr, k), "outputs carry no references or annotations")
			}
		}
		d.outputNames = append(d.outputNames, name)
	}
	sort.Strings(d.outputNames)
}

func (d *Definition) verifyImmutable(v *verifier) {
	d.immutable = map[string]bool{}
	props, _ := d.desired["properties"].(map[string]any)
	for i, p := range d.doc.ImmutableFields {
		ptr := fmt.Sprintf("/immutableFields/%d", i)
		if !isFieldPointer(p) {
			v.add(ptr, "%q is not a JSON pointer such as /field", p)
			continue
		}
		if d.immutable[p] {
			v.add(ptr, "%q is listed twice", p)
		}
		d.immutable[p] = true
		if d.desired != nil && !schemaHasPath(d.desired, p) {
			v.add(ptr, "%q names no property of the desired schema", p)
		}
	}
	for name := range props {
		if !d.immutable[pointerTo("", name)] {
			d.mutableAny = true
		}
	}
	wantUpdate := d.mutableAny && d.doc.Role != RoleRevision
	switch {
	case d.caps[CapUpdate] && d.doc.Role == RoleRevision:
		v.add("/lifecycleCapabilities", "a revision Form is an immutable snapshot and never declares update; remove it")
	case d.caps[CapUpdate] && !d.mutableAny:
		v.add("/lifecycleCapabilities", "update is declared but every desired field is immutable; remove update or make a field mutable")
	case wantUpdate && !d.caps[CapUpdate]:
		v.add("/lifecycleCapabilities", "the Form has a mutable desired field, so it declares update; add update or list the field in immutableFields")
	}
}

func (d *Definition) verifyContracts(v *verifier) {
	if len(d.doc.ProvidedInterfaces) > 64 {
		v.add("/providedInterfaces", "at most 64 provided interfaces")
	}
	seenI := map[InterfaceRef]bool{}
	for i, r := range d.doc.ProvidedInterfaces {
		if err := r.Validate(); err != nil {
			v.add(fmt.Sprintf("/providedInterfaces/%d", i), "%v", err)
		}
		if seenI[r] {
			v.add(fmt.Sprintf("/providedInterfaces/%d", i), "interface %s is listed twice", r)
		}
		seenI[r] = true
	}
	if len(d.doc.AcceptedBindings) > 64 {
		v.add("/acceptedBindings", "at most 64 accepted bindings")
	}
	seenB := map[BindingRef]bool{}
	for i, r := range d.doc.AcceptedBindings {
		if err := r.Validate(); err != nil {
			v.add(fmt.Sprintf("/acceptedBindings/%d", i), "%v", err)
		}
		if seenB[r] {
			v.add(fmt.Sprintf("/acceptedBindings/%d", i), "binding %s is listed twice", r)
		}
		seenB[r] = true
	}
}

func (d *Definition) verifyFixtures(v *verifier) {
	if len(d.doc.ConformanceFixtures) > 32 || len(d.doc.NegativeConformanceFixtures) > 32 {
		v.add("/conformanceFixtures", "at most 32 fixtures of each kind")
	}
	names := map[string]bool{}
	checkPath := func(ptr, p string, required bool) {
		if p == "" && !required {
			return
		}
		if len(p) > 240 || !packagePathPattern.MatchString(p) || dotSegmentPattern.MatchString(p) {
			v.add(ptr, "%q is not a relative package path (segments of A-Z a-z 0-9 . _ -, no . or ..)", p)
		}
	}
	for i, f := range d.doc.ConformanceFixtures {
		ptr := fmt.Sprintf("/conformanceFixtures/%d", i)
		if !fixtureNamePattern.MatchString(f.Name) || names[f.Name] {
			v.add(ptr+"/name", "fixture name %q is invalid or repeated", f.Name)
		}
		names[f.Name] = true
		checkPath(ptr+"/desiredPath", f.DesiredPath, true)
		checkPath(ptr+"/observedPath", f.ObservedPath, false)
		checkPath(ptr+"/outputPath", f.OutputPath, false)
	}
	for i, f := range d.doc.NegativeConformanceFixtures {
		ptr := fmt.Sprintf("/negativeConformanceFixtures/%d", i)
		if !fixtureNamePattern.MatchString(f.Name) || names[f.Name] {
			v.add(ptr+"/name", "fixture name %q is invalid or repeated", f.Name)
		}
		names[f.Name] = true
		if f.Stage != "desired" && f.Stage != "observed" && f.Stage != "output" {
			v.add(ptr+"/stage", "stage %q is not desired, observed or output", f.Stage)
		}
		checkPath(ptr+"/inputPath", f.InputPath, true)
		if !expectedFailurePattern.MatchString(f.ExpectedFailure) {
			v.add(ptr+"/expectedFailure", "expectedFailure %q is not a failure code", f.ExpectedFailure)
		}
	}
}

func decodeSchema(v *verifier, at string, raw json.RawMessage) map[string]any {
	val, err := ijson.Decode(raw)
	if err != nil {
		v.add(at, "%v", err)
		return nil
	}
	m, ok := val.(map[string]any)
	if !ok {
		v.add(at, "a schema is a JSON object")
		return nil
	}
	if m["$schema"] != Draft202012 {
		v.add(at+"/$schema", "$schema must be %s", Draft202012)
	}
	if _, ok := m["type"]; !ok {
		v.add(at+"/type", "an embedded schema states its type")
	}
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// isFieldPointer reports whether p is a JSON pointer (RFC 6901, by
// jsontext.Pointer) to a member below the root: the root itself, "", names
// no field.
func isFieldPointer(p string) bool { return p != "" && jsontext.Pointer(p).IsValid() }

// schemaHasPath reports whether a pointer of property names resolves
// through properties (and array items) of schema.
func schemaHasPath(schema map[string]any, ptr string) bool {
	node := schema
	for tok := range jsontext.Pointer(ptr).Tokens() {
		if tok == "*" {
			items, ok := node["items"].(map[string]any)
			if !ok {
				return false
			}
			node = items
			continue
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[tok].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}
