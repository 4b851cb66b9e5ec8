package provider

import (
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
// full form.LoadFamily computes from the same bytes.
func TestEdgeRegistryDigestsAreTheComputedOnes(t *testing.T) {
	fam, findings := form.LoadFamily(edge.Family())
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	want, err := fam.Catalog()
	if err != nil {
		t.Fatal(err)
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
