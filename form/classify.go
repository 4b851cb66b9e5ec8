package form

// FormClass is how a Form of one family relates to its counterpart, the
// Form of the same kind and definition version in an earlier family
// (spec/lane-v1beta1.md §6.3).
type FormClass string

// The classes of spec/lane-v1beta1.md §6.3, and Changed for a Form that is
// none of them.
const (
	// ClassEquivalent: identical to the counterpart once every digest it
	// names is mapped, and every contract it names is itself equivalent
	// (the greatest fixpoint of Equivalences, across groups).
	ClassEquivalent FormClass = "E"
	// ClassSameFields: identical once every named digest is mapped to its
	// counterpart's, but some named Interface, Binding or target Form is
	// not equivalent.
	ClassSameFields FormClass = "S"
	// ClassAdditive: as ClassSameFields once the new optional desired
	// members (with their immutable paths and negative fixtures) are set
	// aside.
	ClassAdditive FormClass = "A"
	// ClassNew: no counterpart.
	ClassNew FormClass = "N"
	// ClassChanged: a counterpart exists and none of the above holds.
	ClassChanged FormClass = "changed"
)

// Classify classes every Form of next against prev, keyed by kind and
// definition version ("Kind 0.1.0"). groups maps next's Form group to
// prev's: it decides which Form is a counterpart and is applied to every
// string of next's documents (relation constants, target FormRefs,
// allowed target Forms) before comparing, as prose is masked. Contracts
// are paired by name@version. Only the class ClassEquivalent lets one
// codec answer both identities (spec/lane-v1beta1.md §13.4).
func Classify(prev, next *Family, groups map[string]string) map[string]FormClass {
	pairs := pairDocuments(next, prev, groups)
	live := equivalentPairs(pairs)
	counterpart := map[string]string{} // every paired digest, equivalent or not
	for _, p := range pairs {
		counterpart[p.eq.Ours] = p.eq.Theirs
	}
	out := map[string]FormClass{}
	for _, f := range next.Forms {
		r := f.Definition.Ref()
		out[r.Kind+" "+r.DefinitionVersion] = ClassNew
	}
	for i, p := range pairs {
		if p.eq.Doc != "form" {
			continue
		}
		var kind, version string
		for _, f := range next.Forms {
			if r := f.Definition.Ref(); r.SchemaDigest == p.eq.Ours {
				kind, version = r.Kind, r.DefinitionVersion
			}
		}
		mapped := mapDigests(p.mine, counterpart)
		class := ClassChanged
		switch {
		case live[i]:
			class = ClassEquivalent
		case sameJSON(mapped, p.other):
			class = ClassSameFields
		case sameJSON(withoutAdditions(mapped, p.other), p.other):
			class = ClassAdditive
		}
		out[kind+" "+version] = class
	}
	return out
}

// withoutAdditions returns the masked Form Definition mine without the
// optional desired members other lacks, their immutable paths, and the
// negative fixtures other does not name. A member mine requires is kept,
// so a newly required member is never additive.
func withoutAdditions(mine, other any) any {
	m, ok1 := clone(mine).(map[string]any)
	o, ok2 := other.(map[string]any)
	if !ok1 || !ok2 {
		return mine
	}
	props, _ := member(m, "desiredSchema", "properties").(map[string]any)
	theirProps, _ := member(o, "desiredSchema", "properties").(map[string]any)
	required := map[string]bool{}
	req, _ := member(m, "desiredSchema", "required").([]any)
	for _, r := range req {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	added := map[string]bool{}
	for name := range props {
		if _, ok := theirProps[name]; !ok && !required[name] {
			added["/"+name] = true
			delete(props, name)
		}
	}
	if imm, ok := m["immutableFields"].([]any); ok {
		var kept []any
		for _, p := range imm {
			if s, _ := p.(string); !added[s] {
				kept = append(kept, p)
			}
		}
		m["immutableFields"] = kept
	}
	theirNegatives := map[string]bool{}
	neg, _ := o["negativeConformanceFixtures"].([]any)
	for _, n := range neg {
		if nm, ok := n.(map[string]any); ok {
			name, _ := nm["name"].(string)
			theirNegatives[name] = true
		}
	}
	if neg, ok := m["negativeConformanceFixtures"].([]any); ok && len(added) > 0 {
		var kept []any
		for _, n := range neg {
			if nm, ok := n.(map[string]any); ok {
				if name, _ := nm["name"].(string); theirNegatives[name] {
					kept = append(kept, n)
				}
			}
		}
		m["negativeConformanceFixtures"] = kept
	}
	return m
}

// member is the value at the object path keys of v, nil when absent.
func member(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
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
	}
	return v
}
