package provider

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// TestCreateUnderWhatTheHostServes: a type creates under its own ref on a
// host serving our family, under the public equivalent on a host serving
// the public family, and on a host serving neither the refusal names both.
// Each type is asked on the lane of its create ref's group (a v1beta1-only
// type's on lane v1beta1, spec/lane-v1beta1.md §2.5); the hosts serve
// both Edge families, ours or the public ones.
func TestCreateUnderWhatTheHostServes(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	public, publicLanes, err := host.LoadFamilies(host.FamilySources([]string{testref.Dir(t), testref.V1beta1Dir(t)}, func(d string) fs.FS { return os.DirFS(d) }))
	if err != nil {
		t.Fatal(err)
	}
	other, err := host.LoadCatalog(os.DirFS("../../conformance/testdata/forms/example-kv-namespace"))
	if err != nil {
		t.Fatal(err)
	}
	builtin, builtinLanes, err := host.LoadFamilies([]host.FamilySource{{Name: host.BuiltinFamily, FS: edge.Family()}, {Name: "edge-v1beta1", FS: edge.FamilyV1beta1()}})
	if err != nil {
		t.Fatal(err)
	}
	resourceOn := func(ty *TypeSpec, h *hosttest.Host) *Resource {
		lane := wire.DefaultLane
		if ty.DefaultCreate.APIVersion == edge.GroupV1beta1 {
			lane = wire.V1beta1
		}
		c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, Lane: lane})
		if err != nil {
			t.Fatal(err)
		}
		return &Resource{spec: ty, data: &Data{Client: c, Registry: reg}}
	}
	ours, pub, neither := hosttest.Start(t, hosttest.Options{Catalog: builtin, Lanes: builtinLanes}), hosttest.Start(t, hosttest.Options{Catalog: public, Lanes: publicLanes}), hosttest.Start(t, hosttest.Options{Catalog: other})
	for name, ty := range reg.Types {
		if got, _ := resourceOn(ty, ours).createCodec(context.Background(), nil, ""); got != ty.Create {
			t.Errorf("%s on a host serving our family creates under %s", name, got.Ref)
		}
		if got, _ := resourceOn(ty, pub).createCodec(context.Background(), nil, ""); got != ty.CreateEquivalent {
			t.Errorf("%s on a host serving the public family creates under %s", name, got.Ref)
		}
		r := resourceOn(ty, neither)
		c, _ := r.createCodec(context.Background(), nil, "")
		msg := r.servedNeither(c).Error()
		if c != ty.Create || !strings.Contains(msg, ty.Create.Ref.String()) || !strings.Contains(msg, ty.CreateEquivalent.Ref.String()) {
			t.Errorf("%s on a host serving neither: %s", name, msg)
		}
	}
}
