package provider

import (
	"fmt"
	"maps"
	"slices"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// createFamily is one family a type can create in: the family's group,
// our own definition's codec and the public equivalent's (nil when the
// table pairs none; repo decision 0016).
type createFamily struct {
	group  string
	ours   *Codec
	public *Codec
}

// families lists the families t creates in, oldest group first: the
// Edge types of both families have two (spec/lane-v1beta1.md §13.4); a
// V1beta1OnlyKinds type, or a type of any other registry, has its default
// create ref's alone.
func (t *TypeSpec) families() []createFamily {
	if len(t.Families) > 0 {
		return t.Families
	}
	return []createFamily{{group: t.DefaultCreate.APIVersion, ours: t.Create, public: t.CreateEquivalent}}
}

// V1beta1OnlyKinds are the Forms only the v1beta1 Edge family has; each
// is a one-family type of this build created under its v1beta1 ref, on
// lane v1beta1 (spec/lane-v1beta1.md §13.1, §13.2).
var V1beta1OnlyKinds = []string{"StaticAssetBundle", "SQLiteMigrationSet", "SQLiteMigrationApplication"}

// withV1beta1 adds the v1beta1 Edge family (v1beta1Catalog) to cat and
// extends decls, the v1alpha1 family's declarations (DeclareCatalog):
// addV1beta1Family gives each type whose kind both families define our
// v1beta1 definition as a supported ref, and each V1beta1OnlyKinds Form
// becomes a type of its own.
func withV1beta1(cat *form.Catalog, decls []TypeDecl) (*form.Catalog, []TypeDecl, error) {
	beta, err := v1beta1Catalog()
	if err != nil {
		return nil, nil, err
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
	out := addV1beta1Family(decls, beta)
	for _, kind := range V1beta1OnlyKinds {
		v := beta.Versions(edge.GroupV1beta1, kind)
		if len(v) != 1 {
			return nil, nil, fmt.Errorf("built-in v1beta1 Edge family: %d definitions of %s, want 1", len(v), kind)
		}
		ref := v[0].Definition.Ref()
		out = append(out, TypeDecl{Name: TypeName(kind), DefaultCreate: ref, Supported: []form.FormRef{ref}})
	}
	return cat, out, nil
}

// addV1beta1Family makes every v1alpha1 declaration whose kind the v1beta1
// Edge family also defines support our v1beta1 definition of that kind:
// NewRegistry derives its codec from THAT definition (NewCodec;
// spec/lane-v1beta1.md §13.4: the S and A Forms get their own codecs
// because the relation target group and the Interface and Binding digests
// they send and check differ), and the type's schema gains the attributes
// only it has (schemaFields: WorkerVersion.assets, §13.3). addEquivalents
// then adds each public equivalent the table pairs (repo decision 0016),
// and recordFamilies records both families. Kinds the v1beta1 family alone
// defines are V1beta1OnlyKinds.
func addV1beta1Family(decls []TypeDecl, beta *form.Catalog) []TypeDecl {
	byKind := map[string]form.FormRef{}
	for _, in := range beta.Forms() {
		ref := in.Definition.Ref()
		byKind[ref.Kind] = ref
	}
	out := slices.Clone(decls)
	for i, d := range out {
		if d.DefaultCreate.APIVersion != edge.GroupV1alpha1 {
			continue
		}
		if ref, ok := byKind[d.DefaultCreate.Kind]; ok {
			out[i].Supported = append(slices.Clone(d.Supported), ref)
		}
	}
	return out
}

// recordFamilies fills TypeSpec.Families of every two-family type once
// addEquivalents has added the public codecs; a type created under a
// v1beta1 ref (V1beta1OnlyKinds) has that family alone.
func recordFamilies(r *Registry) {
	for _, t := range r.Types {
		if t.DefaultCreate.APIVersion == edge.GroupV1beta1 {
			continue
		}
		var beta *Codec
		for ref, c := range t.Codecs {
			if ref.APIVersion == edge.GroupV1beta1 && ref.Kind == t.DefaultCreate.Kind && ref.DefinitionVersion == t.DefaultCreate.DefinitionVersion && c.contracts == nil {
				beta = c
			}
		}
		if beta == nil {
			continue
		}
		var public *Codec
		for ref, c := range t.Codecs {
			if ref.APIVersion == edge.GroupV1beta1 && ref.Kind == beta.Ref.Kind && ref != beta.Ref && c.contracts != nil && c.Def == beta.Def {
				public = c
			}
		}
		t.Families = []createFamily{
			{group: t.DefaultCreate.APIVersion, ours: t.Create, public: t.CreateEquivalent},
			{group: edge.GroupV1beta1, ours: beta, public: public},
		}
	}
}

// v1beta1Catalog loads our v1beta1 Edge family with the digests its
// generator recorded (as EdgeRegistry loads the v1alpha1 one; repo
// decision 0054).
func v1beta1Catalog() (*form.Catalog, error) {
	idx, err := edge.IndexV1beta1()
	if err != nil {
		return nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
	}
	fam, findings := form.LoadFamilyDigested(edge.FamilyV1beta1(), edgeDigests(idx))
	if len(findings) > 0 {
		return nil, fmt.Errorf("built-in v1beta1 Edge family: %s", findings[0])
	}
	cat, err := fam.Catalog()
	if err != nil {
		return nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
	}
	return cat, nil
}

// schemaFields is the desired fields of t's schema: the default create
// definition's, then, sorted by attribute, every field another codec of
// the type has that it lacks. Such a field is never Required in the
// schema (only some of the type's refs have it: a Required attribute would
// be newly required of every other, decision 0030) and never carries a
// default (the other refs' resources would plan it).
func schemaFields(t *TypeSpec) []Field {
	out := slices.Clone(t.Create.Fields)
	have := map[string]bool{}
	for _, f := range out {
		have[f.Attr] = true
	}
	extra := map[string]Field{}
	for _, ref := range t.KnownRefs() {
		for _, f := range t.Codecs[ref].Fields {
			if !have[f.Attr] {
				if _, dup := extra[f.Attr]; !dup {
					f.Required, f.HasDefault, f.Default = false, false, nil
					extra[f.Attr] = f
				}
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, extra[a])
	}
	return out
}

// refsWith lists, for messages, the exact FormRefs of this type's codecs
// whose desired schema has attribute attr.
func (t *TypeSpec) refsWith(attr string) []string {
	var out []string
	for _, ref := range t.KnownRefs() {
		for _, f := range t.Codecs[ref].Fields {
			if f.Attr == attr {
				out = append(out, ref.String())
			}
		}
	}
	return out
}
