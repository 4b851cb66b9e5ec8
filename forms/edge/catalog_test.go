package edge

import (
	"testing"

	"github.com/takoform/takoform/form"
)

// TestFamilyLoadsThroughForm holds our documents to the form package's
// structural verification, fixture checks and digest cascade — the same
// code a host runs when it installs a family.
func TestFamilyLoadsThroughForm(t *testing.T) { eachEdition(t, testFamilyLoadsThroughForm) }

func testFamilyLoadsThroughForm(t *testing.T, ed docEdition) {
	fam, findings := form.LoadFamily(ed.fsys)
	for _, f := range findings {
		t.Errorf("load: %s", f)
	}
	for _, f := range fam.CheckFixtures(ed.fsys) {
		t.Errorf("fixture: %s", f)
	}
	for _, f := range fam.CheckReferences() {
		t.Errorf("reference: %s", f)
	}
	cat, err := fam.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := IndexOf(ed.fsys)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != ed.forms || len(idx.Forms) != ed.forms || len(cat.Interfaces()) != 6 || len(cat.Bindings()) != 5 {
		t.Fatalf("catalog %d forms, %d interfaces, %d bindings", cat.Len(), len(cat.Interfaces()), len(cat.Bindings()))
	}
	for _, f := range idx.Forms {
		ref := form.FormRef{APIVersion: f.FormRef.APIVersion, Kind: f.FormRef.Kind, DefinitionVersion: f.FormRef.DefinitionVersion, SchemaDigest: f.FormRef.SchemaDigest}
		in, ok := cat.Form(ref)
		if !ok {
			t.Errorf("family.json names %v, which the documents do not digest to", ref)
			continue
		}
		if string(in.Definition.Role()) != f.Role {
			t.Errorf("%s role %s, family.json says %s", ref.Kind, in.Definition.Role(), f.Role)
		}
	}
}
