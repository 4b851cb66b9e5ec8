package provider

import (
	"fmt"

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
// Edge types of EdgeRegistry have two (spec/lane-v1beta1.md §13.4); a type
// of any other registry has its default create ref's alone.
func (t *TypeSpec) families() []createFamily {
	if len(t.Families) > 0 {
		return t.Families
	}
	return []createFamily{{group: t.DefaultCreate.APIVersion, ours: t.Create, public: t.CreateEquivalent}}
}

// addV1beta1Family gives every type of r whose kind the v1beta1 Edge
// family also defines a codec for our v1beta1 definition of that kind,
// derived from THAT definition (NewCodec; spec/lane-v1beta1.md §13.4: the
// S and A Forms get their own codecs because the relation target group
// and the Interface and Binding digests they send and check differ), and
// records both families in TypeSpec.Families. addEquivalents, run after
// it, adds each public equivalent the table pairs (repo decision 0016).
// Kinds the v1beta1 family alone defines get no type here.
func addV1beta1Family(r *Registry, cat *form.Catalog) {
	byKind := map[string]*TypeSpec{}
	for _, t := range r.Types {
		if t.DefaultCreate.APIVersion == edge.GroupV1alpha1 {
			byKind[t.DefaultCreate.Kind] = t
		}
	}
	for _, in := range cat.Forms() {
		ref := in.Definition.Ref()
		t, ok := byKind[ref.Kind]
		if !ok {
			continue
		}
		t.Codecs[ref] = NewCodec(in.Definition)
	}
}

// recordFamilies fills TypeSpec.Families of every two-family type once
// addEquivalents has added the public codecs.
func recordFamilies(r *Registry) {
	for _, t := range r.Types {
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
// generator recorded (as EdgeRegistry loads the v1alpha1 one).
func v1beta1Catalog() (*form.Catalog, error) {
	idx, err := edge.IndexV1beta1()
	if err != nil {
		return nil, fmt.Errorf("built-in v1beta1 Edge family: %w", err)
	}
	fam, findings := form.LoadFamilyDigested(edge.FamilyV1beta1(), edgeDigests(idx))
	if len(findings) > 0 {
		return nil, fmt.Errorf("built-in v1beta1 Edge family: %s", findings[0])
	}
	return fam.Catalog()
}
