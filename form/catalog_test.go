package form_test

import (
	"errors"
	"testing"

	"github.com/takoform/takoform/form"
)

func TestCatalogKeyedByWholeRef(t *testing.T) {
	v1 := parse(t, widget())
	doc := widget()
	doc["definitionVersion"] = "1.3.0"
	at(doc, "desiredSchema", "properties")["shape"] = map[string]any{"type": "string"}
	v2 := parse(t, doc)

	var empty *form.Catalog
	c1, err := empty.AddForm(v1, "sha256:aaaa")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := c1.AddForm(v2, "")
	if err != nil {
		t.Fatal(err)
	}
	if c1.Len() != 1 || c2.Len() != 2 {
		t.Fatalf("AddForm changed its receiver: %d, %d", c1.Len(), c2.Len())
	}
	if _, ok := c1.Form(v2.Ref()); ok {
		t.Fatal("the older catalog sees a later addition")
	}
	for _, d := range []*form.Definition{v1, v2} {
		in, ok := c2.Form(d.Ref())
		if !ok || in.Definition != d {
			t.Fatalf("%v not answered by its exact ref", d.Ref())
		}
	}
	if got := c2.Versions("forms.example.com/v1alpha1", "Widget"); len(got) != 2 {
		t.Fatalf("two definition versions of one kind do not coexist: %d", len(got))
	}
	// Any one member off addresses nothing: no fallback to group and kind.
	for _, mutate := range []func(r *form.FormRef){
		func(r *form.FormRef) { r.SchemaDigest = formDigest },
		func(r *form.FormRef) { r.DefinitionVersion = "9.9.9" },
		func(r *form.FormRef) { r.Kind = "Gadget" },
		func(r *form.FormRef) { r.APIVersion = "forms.other.example/v1alpha1" },
	} {
		r := v1.Ref()
		mutate(&r)
		if _, ok := c2.Form(r); ok {
			t.Errorf("catalog answered %v", r)
		}
	}
	if in, _ := c2.Form(v1.Ref()); in.PackageDigest != "sha256:aaaa" {
		t.Fatal("package digest not kept as audit evidence")
	}
	// The same FormRef from another package is the same installed Form.
	c3, err := c2.AddForm(v1, "sha256:bbbb")
	if err != nil || c3.Len() != 2 {
		t.Fatalf("re-installing an identical ref: %v, len %d", err, c3.Len())
	}
	// Another digest under an installed definition version is a conflict.
	doc3 := widget()
	doc3["title"] = "Widget, retitled"
	_, err = c2.AddForm(parse(t, doc3), "")
	var ce *form.ConflictError
	if !errors.As(err, &ce) || ce.Installed != v1.Ref() {
		t.Fatalf("conflicting digest under 1.2.0: %v", err)
	}
	if in, ok := c2.FormByVersion("forms.example.com/v1alpha1", "Widget", "1.3.0"); !ok || in.Definition != v2 {
		t.Fatal("FormByVersion does not find 1.3.0")
	}
}
