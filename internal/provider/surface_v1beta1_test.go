package provider_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/surface"
)

// publicV1beta1Surface is public provider 2.1.1's live 15-type surface,
// the floor for interoperability (spec/lane-v1beta1.md §13.5), or a skip
// of t when the reference data is absent.
func publicV1beta1Surface(t *testing.T) *surface.Surface {
	t.Helper()
	want := referenceSurface(t, filepath.Join(testref.V1beta1Dir(t), "terraform-surface-v1beta1-derived.json"))
	if len(want.Types) != 15 {
		t.Fatalf("the public v1beta1 surface lists %d types, want 15", len(want.Types))
	}
	return want
}

// TestLiveSurfaceHoldsThePublicV1beta1Floor is `surface check` of this
// build's provider against public provider 2.1.1's surface: every type
// and attribute it has, with the same type and flags and schema version
// (spec/lane-v1beta1.md §13.2, §13.5), so its state moves to ours with
// `tofu state replace-provider` (§13.8).
func TestLiveSurfaceHoldsThePublicV1beta1Floor(t *testing.T) {
	for _, f := range surface.Check(publicV1beta1Surface(t), liveSurface(t, edgeRegistry(t))) {
		t.Errorf("%s", f)
	}
}

// TestBaselineCoversThePublicV1beta1Surface: the committed floor itself
// holds public 2.1.1's surface, so no later build can drop what it has.
func TestBaselineCoversThePublicV1beta1Surface(t *testing.T) {
	for _, f := range surface.Check(publicV1beta1Surface(t), committedBaseline(t)) {
		t.Errorf("%s", f)
	}
}

// TestV1beta1MoveMintsNoV2Type proves each verdict of spec/lane-v1beta1.md
// §13.5 from the definitions themselves: for every Form the two Edge
// families share, the attribute mapping of the v1beta1 definition equals
// the v1alpha1 one's (same attributes, kinds, requiredness, defaults,
// immutability, relation targets by kind; digests are not attributes),
// except WorkerVersion, which adds exactly one Optional attribute,
// `assets`; the three v1beta1-only Forms are new types. The build's
// surface then holds the pre-move floor (the twelve v1alpha3 types) with
// no `_v2` type and schema version 1 everywhere (§13.1).
func TestV1beta1MoveMintsNoV2Type(t *testing.T) {
	reg := edgeRegistry(t)
	one := func(group, kind string) *form.Definition {
		v := reg.Catalog.Versions(group, kind)
		if len(v) != 1 {
			t.Fatalf("%s %s: %d definitions in the build, want 1", group, kind, len(v))
		}
		return v[0].Definition
	}
	type shape struct {
		Attr, Target string
		Kind         provider.Kind
		Required     bool
		HasDefault   bool
		Immutable    bool
		Nested       string
	}
	var shapes func(fs []provider.Field) []shape
	shapes = func(fs []provider.Field) []shape {
		var out []shape
		for _, f := range fs {
			nested := ""
			for _, n := range shapes(f.Nested) {
				nested += n.Attr + ":" + n.Target + ";"
			}
			out = append(out, shape{f.Attr, f.Target, f.Kind, f.Required, f.HasDefault, f.Immutable, nested})
		}
		return out
	}
	alpha := map[string]bool{}
	for _, in := range reg.Catalog.Forms() {
		if in.Definition.Ref().APIVersion == edge.GroupV1alpha1 {
			alpha[in.Definition.Ref().Kind] = true
		}
	}
	if len(alpha) != 12 {
		t.Fatalf("the build has %d v1alpha1 Edge Forms, want 12", len(alpha))
	}
	for kind := range alpha {
		a := shapes(provider.Fields(one(edge.GroupV1alpha1, kind)))
		b := shapes(provider.Fields(one(edge.GroupV1beta1, kind)))
		if kind == "WorkerVersion" {
			i := slices.IndexFunc(b, func(s shape) bool { return s.Attr == "assets" })
			if i < 0 || b[i].Required || b[i].Kind != provider.KindObject || !b[i].Immutable {
				t.Fatalf("v1beta1 WorkerVersion: assets is %+v, want an Optional single object forcing replacement", b)
			}
			b = slices.Delete(b, i, i+1)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: the v1beta1 definition maps to other attributes than the v1alpha1 one (a _v2 verdict):\n v1alpha1 %+v\n v1beta1  %+v", kind, a, b)
		}
	}
	for _, kind := range provider.V1beta1OnlyKinds {
		if alpha[kind] {
			t.Errorf("%s has a v1alpha1 counterpart; spec/lane-v1beta1.md §13.5 calls it new", kind)
		}
		if _, ok := reg.Types[provider.TypeName(kind)]; !ok {
			t.Errorf("%s: no type %s", kind, provider.TypeName(kind))
		}
	}
	live := liveSurface(t, reg)
	if len(live.Types) != 15 {
		t.Errorf("the build has %d types, want 15: %v", len(live.Types), live.TypeNames())
	}
	for name, ty := range live.Types {
		if strings.HasSuffix(name, "_v2") || ty.Version != 1 {
			t.Errorf("%s: schema version %d; the move mints no _v2 type and keeps version 1", name, ty.Version)
		}
	}
	wv := live.Types["takoform_worker_version"].Attributes["assets"]
	if wv.Required || !wv.Optional || wv.Computed {
		t.Errorf("takoform_worker_version.assets is %s, want O", wv.Flags())
	}
	// the twelve v1alpha3 types of the floor before the move
	data, err := os.ReadFile(baselinePath)
	if err != nil {
		t.Fatal(err)
	}
	before, err := surface.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range provider.V1beta1OnlyKinds {
		delete(before.Types, provider.TypeName(kind))
		delete(before.DataSources, provider.TypeName(kind))
	}
	delete(before.Types["takoform_worker_version"].Attributes, "assets")
	for a := range before.Types["takoform_worker_version"].Attributes {
		if strings.HasPrefix(a, "assets.") {
			delete(before.Types["takoform_worker_version"].Attributes, a)
		}
	}
	for _, f := range surface.Check(before, live) {
		t.Errorf("%s", f)
	}
}
