package provider

import (
	"io/fs"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
)

// BenchmarkEdgeRegistry measures what every provider process does before
// its first RPC: load the built-in Edge family and build its registry
// (spec/decisions/0037-provider-start.md).
func BenchmarkEdgeRegistry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EdgeRegistry(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEdgeRegistryDigestsAreTheComputedOnes: the registry, which takes the
// embedded documents' digests from family.json, holds exactly the refs a
// full form.LoadFamily computes from the same bytes, of both Edge
// families.
func TestEdgeRegistryDigestsAreTheComputedOnes(t *testing.T) {
	var want *form.Catalog
	for _, fs := range []fs.FS{edge.Family(), edge.FamilyV1beta1()} {
		fam, findings := form.LoadFamily(fs)
		if len(findings) > 0 {
			t.Fatal(findings)
		}
		cat, err := fam.Catalog()
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = cat
			continue
		}
		for _, in := range cat.Forms() {
			if want, err = want.AddForm(in.Definition, in.PackageDigest); err != nil {
				t.Fatal(err)
			}
		}
		for _, i := range cat.Interfaces() {
			want = want.AddInterface(i)
		}
		for _, b := range cat.Bindings() {
			want = want.AddBinding(b)
		}
	}
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	got := reg.Catalog
	if len(got.Forms()) != len(want.Forms()) || len(got.Interfaces()) != len(want.Interfaces()) || len(got.Bindings()) != len(want.Bindings()) {
		t.Fatalf("registry catalog has %d/%d/%d documents, LoadFamily %d/%d/%d", len(got.Forms()), len(got.Interfaces()), len(got.Bindings()), len(want.Forms()), len(want.Interfaces()), len(want.Bindings()))
	}
	for i, f := range want.Forms() {
		if g := got.Forms()[i].Definition.Ref(); g != f.Definition.Ref() {
			t.Errorf("form %d: registry %v, computed %v", i, g, f.Definition.Ref())
		}
	}
	for i, d := range want.Interfaces() {
		if g := got.Interfaces()[i].Ref(); g != d.Ref() {
			t.Errorf("interface %d: registry %v, computed %v", i, g, d.Ref())
		}
	}
	for i, d := range want.Bindings() {
		if g := got.Bindings()[i].Ref(); g != d.Ref() {
			t.Errorf("binding %d: registry %v, computed %v", i, g, d.Ref())
		}
	}
}
