package form

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/takoform/takoform/ijson"
)

// Equivalence is one document of a family that is structurally identical
// to the same document of another family (decision
// spec/decisions/0016-equivalent-identities.md): Doc is "form",
// "interface" or "binding"; Identity names it (a Form's "group kind
// definitionVersion", a contract's name@version); Ours and Theirs are the
// two schema digests.
type Equivalence struct {
	Doc, Identity, Ours, Theirs string
}

// proseKeys are the members masked before two documents are compared:
// they say things to people and change no behaviour.
var proseKeys = map[string]bool{"title": true, "description": true, "$comment": true, "examples": true}

// nameMaps are schema keywords whose members are names chosen by the
// author (a property called "title" is structure, not prose).
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// Equivalences compares two families document by document and returns
// every document of ours that is equivalent to theirs, sorted by Doc and
// Identity. Two documents under one identity (a Form's group, kind and
// definition version; a contract's name and version) are equivalent when,
// with prose (title, description, $comment, examples) masked at every
// depth and every digest ours names replaced by its equivalent, they are
// identical. Equivalence is family-wide: a document naming a digest that
// is not itself equivalent (nor equal) is not equivalent, so the table is
// the greatest fixpoint of that rule. Documents without a counterpart are
// left out.
func Equivalences(ours, theirs *Family) []Equivalence {
	pairs := pairDocuments(ours, theirs, nil)
	live := equivalentPairs(pairs)
	var out []Equivalence
	for i, p := range pairs {
		if live[i] {
			out = append(out, p.eq)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Doc != out[j].Doc {
			return out[i].Doc < out[j].Doc
		}
		return out[i].Identity < out[j].Identity
	})
	return out
}

// docPair is one document of ours and its counterpart under the same
// identity, both decoded with prose masked; mine also has ours' group
// strings mapped to theirs.
type docPair struct {
	eq          Equivalence
	mine, other any
}

// pairDocuments pairs every document of ours with the document of theirs
// under the same identity: a Form by group, kind and definition version
// (ours' group read through groups, when it is a key of it), a contract
// by name@version. Each Equivalence names ours' identity.
func pairDocuments(ours, theirs *Family, groups map[string]string) []docPair {
	var pairs []docPair
	add := func(doc, identity, mineDigest, otherDigest string, mine, other []byte) {
		a, errA := ijson.Decode(mine)
		b, errB := ijson.Decode(other)
		if errA == nil && errB == nil {
			pairs = append(pairs, docPair{Equivalence{doc, identity, mineDigest, otherDigest}, mapDigests(mask(a, ""), groups), mask(b, "")})
		}
	}
	theirForms := map[versionKey]*Definition{}
	for _, f := range theirs.Forms {
		r := f.Definition.Ref()
		theirForms[versionKey{r.APIVersion, r.Kind, r.DefinitionVersion}] = f.Definition
	}
	for _, f := range ours.Forms {
		r := f.Definition.Ref()
		group := r.APIVersion
		if g, ok := groups[group]; ok {
			group = g
		}
		if t, ok := theirForms[versionKey{group, r.Kind, r.DefinitionVersion}]; ok {
			add("form", r.APIVersion+" "+r.Kind+" "+r.DefinitionVersion, r.SchemaDigest, t.Ref().SchemaDigest, f.Definition.Raw(), t.Raw())
		}
	}
	theirIfaces := map[string]*InterfaceDefinition{}
	for _, i := range theirs.Interfaces {
		theirIfaces[i.Definition.Ref().Name+"@"+i.Definition.Ref().Version] = i.Definition
	}
	for _, i := range ours.Interfaces {
		r := i.Definition.Ref()
		if t, ok := theirIfaces[r.Name+"@"+r.Version]; ok {
			add("interface", r.Name+"@"+r.Version, r.SchemaDigest, t.Ref().SchemaDigest, i.Definition.Raw(), t.Raw())
		}
	}
	theirBinds := map[string]*BindingDefinition{}
	for _, b := range theirs.Bindings {
		theirBinds[b.Definition.Ref().Name+"@"+b.Definition.Ref().Version] = b.Definition
	}
	for _, b := range ours.Bindings {
		r := b.Definition.Ref()
		if t, ok := theirBinds[r.Name+"@"+r.Version]; ok {
			add("binding", r.Name+"@"+r.Version, r.SchemaDigest, t.Ref().SchemaDigest, b.Definition.Raw(), t.Raw())
		}
	}
	return pairs
}

// equivalentPairs is the greatest fixpoint: it starts from every pair and
// drops, until nothing changes, each pair that differs once its digests
// are mapped through the pairs still standing.
func equivalentPairs(pairs []docPair) []bool {
	live := make([]bool, len(pairs))
	for i := range live {
		live[i] = true
	}
	for changed := true; changed; {
		changed = false
		table := map[string]string{}
		for i, p := range pairs {
			if live[i] {
				table[p.eq.Ours] = p.eq.Theirs
			}
		}
		for i, p := range pairs {
			if live[i] && !sameJSON(mapDigests(p.mine, table), p.other) {
				live[i], changed = false, true
			}
		}
	}
	return live
}

// mask returns v without prose members; parent is the member name v sits
// under (names under a nameMaps keyword are kept).
func mask(v any, parent string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if proseKeys[k] && !nameMaps[parent] {
				continue
			}
			out[k] = mask(x, k)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = mask(x, "")
		}
		return out
	}
	return v
}

// mapDigests replaces every string that is a key of table by its value.
func mapDigests(v any, table map[string]string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = mapDigests(x, table)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = mapDigests(x, table)
		}
		return out
	case string:
		if m, ok := table[t]; ok { // a nil table maps nothing
			return m
		}
	}
	return v
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
