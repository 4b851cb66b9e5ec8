package provider

import (
	"fmt"
	"maps"
	"slices"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// V1beta1OnlyKinds are the Forms only the v1beta1 Edge family has; each
// is a type of this build created under its v1beta1 ref
// (spec/lane-v1beta1.md §13.1, §13.2).
var V1beta1OnlyKinds = []string{"StaticAssetBundle", "SQLiteMigrationSet", "SQLiteMigrationApplication"}

// v1beta1SchemaKinds are the kinds whose v1beta1 definition adds Optional
// attributes to an existing type's schema (spec/lane-v1beta1.md §13.3:
// WorkerVersion.assets).
var v1beta1SchemaKinds = []string{"WorkerVersion"}

// withV1beta1 adds the v1beta1 Edge family (forms/edge.FamilyV1beta1,
// loaded with the digests its generator recorded, repo decision 0054) to
// cat, declares one type per V1beta1OnlyKinds Form, and makes each
// v1beta1SchemaKinds type's schema carry its v1beta1 attributes. decls are
// the v1alpha1 family's declarations (DeclareCatalog).
func withV1beta1(cat *form.Catalog, decls []TypeDecl) (*form.Catalog, []TypeDecl, error) {
	idx, err := edge.IndexV1beta1()
	if err != nil {
		return nil, nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
	}
	fam, findings := form.LoadFamilyDigested(edge.FamilyV1beta1(), edgeDigests(idx))
	if len(findings) > 0 {
		return nil, nil, fmt.Errorf("built-in v1beta1 Edge family: %s", findings[0])
	}
	beta, err := fam.Catalog()
	if err != nil {
		return nil, nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
	}
	for _, in := range beta.Forms() {
		if cat, err = cat.AddForm(in.Definition, in.PackageDigest); err != nil {
			return nil, nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
		}
	}
	for _, i := range beta.Interfaces() {
		cat = cat.AddInterface(i)
	}
	for _, b := range beta.Bindings() {
		cat = cat.AddBinding(b)
	}
	betaRef := func(kind string) (form.FormRef, error) {
		v := beta.Versions(edge.GroupV1beta1, kind)
		if len(v) != 1 {
			return form.FormRef{}, fmt.Errorf("built-in v1beta1 Edge family: %d definitions of %s, want 1", len(v), kind)
		}
		return v[0].Definition.Ref(), nil
	}
	out := slices.Clone(decls)
	for i, d := range out {
		if slices.Contains(v1beta1SchemaKinds, d.DefaultCreate.Kind) {
			ref, err := betaRef(d.DefaultCreate.Kind)
			if err != nil {
				return nil, nil, err
			}
			out[i].SchemaAlso = append(slices.Clone(d.SchemaAlso), ref)
		}
	}
	for _, kind := range V1beta1OnlyKinds {
		ref, err := betaRef(kind)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, TypeDecl{Name: TypeName(kind), DefaultCreate: ref, Supported: []form.FormRef{ref}})
	}
	return cat, out, nil
}

// schemaFields is the desired fields of t's schema: the default create
// definition's, then, sorted by attribute, every field another codec of
// the type or a SchemaAlso definition has that it lacks. Such a field is
// never Required in the schema (only one of the type's refs has it: a
// Required attribute would be newly required of every other, decision
// 0030) and never carries a default (the other refs' resources would plan
// it).
func schemaFields(t *TypeSpec, also []*form.Definition) []Field {
	out := slices.Clone(t.Create.Fields)
	have := map[string]bool{}
	for _, f := range out {
		have[f.Attr] = true
	}
	extra := map[string]Field{}
	add := func(fields []Field) {
		for _, f := range fields {
			if !have[f.Attr] {
				if _, dup := extra[f.Attr]; !dup {
					f.Required, f.HasDefault, f.Default = false, false, nil
					extra[f.Attr] = f
				}
			}
		}
	}
	for _, ref := range t.KnownRefs() {
		add(t.Codecs[ref].Fields)
	}
	for _, def := range also {
		add(Fields(def))
	}
	for _, a := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, extra[a])
	}
	return out
}

// refsWith lists, for messages, the exact FormRefs of this type's codecs
// and of its SchemaAlso definitions whose desired schema has attribute
// attr; "none this build carries a codec for" when only a SchemaAlso
// definition has it.
func (t *TypeSpec) refsWith(attr string) []string {
	var out []string
	for _, ref := range t.KnownRefs() {
		for _, f := range t.Codecs[ref].Fields {
			if f.Attr == attr {
				out = append(out, ref.String())
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "none this build carries a codec for yet")
	}
	return out
}
