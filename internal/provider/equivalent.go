package provider

import (
	"github.com/takoform/takoform/form"
)

//go:generate go run ../equivtable/gen -out equivalent_gen.go

// equivalent is one row of the generated table publicEquivalents: family
// is the group of our family the row belongs to (forms/edge.GroupV1alpha1
// or GroupV1beta1). A row pairs two identities of one lane; it never
// makes one codec answer two groups. A codec may be shared across the two
// Edge groups only for a Form of class E (form.Classify;
// spec/lane-v1beta1.md §13.4, repo decision 0054): WorkerBundle alone.
type equivalent struct {
	family, doc, identity, ours, public string
}

// publicDigests maps our digests to the public family's, for every
// document of the table (Forms, Interfaces, Bindings).
func publicDigests() map[string]string {
	out := make(map[string]string, len(publicEquivalents))
	for _, e := range publicEquivalents {
		out[e.ours] = e.public
	}
	return out
}

// addEquivalents gives every type of r a codec for the public family's
// exact FormRef of each ref it supports that the table pairs: the same
// codec (structurally identical definition), answering under the public
// ref and naming the public digests of the Interfaces and Bindings it
// checks (decision spec/decisions/0016-equivalent-identities.md). A type
// whose default create ref has an equivalent records it in
// CreateEquivalent.
func addEquivalents(r *Registry) {
	digests := map[string]string{}
	for _, e := range publicEquivalents {
		if e.doc == "form" {
			digests[e.ours] = e.public
		}
	}
	contracts := publicDigests()
	for _, t := range r.Types {
		for _, ref := range t.KnownRefs() {
			pub, ok := digests[ref.SchemaDigest]
			if !ok {
				continue
			}
			c := *t.Codecs[ref]
			c.Ref = form.FormRef{APIVersion: ref.APIVersion, Kind: ref.Kind, DefinitionVersion: ref.DefinitionVersion, SchemaDigest: pub}
			c.contracts = contracts
			t.Codecs[c.Ref] = &c
			if ref == t.DefaultCreate {
				t.CreateEquivalent = &c
			}
		}
	}
}
