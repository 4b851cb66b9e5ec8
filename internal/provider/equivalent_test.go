package provider

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/internal/equivtable"
	"github.com/takoform/takoform/internal/testref"
)

// TestEquivalentTableIsGenerated: the committed table is what the
// generator makes from the reference data now (`make generate`).
func TestEquivalentTableIsGenerated(t *testing.T) {
	dir := testref.Dir(t)
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "takoform-v1beta1")); err != nil {
		t.Skip("reference data ../shared/reference/takoform-v1beta1 is absent beside the repository; the table's v1beta1 rows are not checked")
	}
	eqs, err := equivtable.Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := equivtable.Render(eqs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("equivalent_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("equivalent_gen.go drifted from the reference data; run `make generate` and commit it")
	}
}

// TestEveryTypeDecodesThePublicIdentity: each of the 15 types carries a
// codec for the public family's exact FormRef of its kind — the codec of
// our structurally identical definition, naming the public digests of the
// contracts it checks — and creates under it when that is what a host
// serves.
func TestEveryTypeDecodesThePublicIdentity(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	public := map[string]string{}
	for _, e := range publicEquivalents {
		public[e.ours] = e.public
	}
	if len(reg.Types) != 15 {
		t.Fatalf("%d types", len(reg.Types))
	}
	for name, ty := range reg.Types {
		own := ty.DefaultCreate
		pub := own
		pub.SchemaDigest = public[own.SchemaDigest]
		c, ok := ty.Codec(pub)
		switch {
		case pub.SchemaDigest == "":
			t.Errorf("%s: no public equivalent of %s", name, own)
		case !ok:
			t.Errorf("%s: no codec for the public identity %s", name, pub)
		case c.Def != ty.Create.Def || c.Ref != pub || ty.CreateEquivalent != c:
			t.Errorf("%s: the public identity's codec is not ours under the public ref", name)
		}
		for _, i := range ty.Create.Def.ProvidedInterfaces() {
			if got := c.contractDigest(i.SchemaDigest); got != public[i.SchemaDigest] || got == i.SchemaDigest {
				t.Errorf("%s: interface %s@%s is named %s under the public identity, want %s", name, i.Name, i.Version, got, public[i.SchemaDigest])
			}
		}
		if ty.Create.contractDigest(own.SchemaDigest) != own.SchemaDigest {
			t.Errorf("%s: our own codec maps digests", name)
		}
	}
}
