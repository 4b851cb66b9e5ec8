package provider

import (
	"context"
	"strings"

	"testing"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/wire"
)

// TestEdgeRegistryBothFamilies: every Edge type of both families carries,
// per family, our own codec and the public equivalent's, each derived from
// a definition of its own group, whose relations target that group only,
// spoken on the lane of its group (spec/lane-v1beta1.md §13.4); each
// V1beta1OnlyKinds type has the v1beta1 family alone (§13.1).
func TestEdgeRegistryBothFamilies(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Types) != 12+len(V1beta1OnlyKinds) {
		t.Fatalf("%d types, want %d", len(reg.Types), 12+len(V1beta1OnlyKinds))
	}
	for _, k := range V1beta1OnlyKinds {
		ty := reg.Types[TypeName(k)]
		if ty == nil {
			t.Fatalf("no type %s", TypeName(k))
		}
		fams := ty.families()
		if len(fams) != 1 || fams[0].group != edge.GroupV1beta1 || fams[0].ours != ty.Create {
			t.Errorf("%s: families %v, want the v1beta1 family alone", ty.Name, fams)
		}
	}
	for name, ty := range reg.Types {
		fams := ty.families()
		if ty.DefaultCreate.APIVersion == edge.GroupV1beta1 {
			if len(ty.Codecs) != 2 {
				t.Errorf("%s: %d codecs, want 2 (ours and public)", name, len(ty.Codecs))
			}
		} else {
			if len(fams) != 2 || fams[0].group != edge.GroupV1alpha1 || fams[1].group != edge.GroupV1beta1 {
				t.Errorf("%s: families %v", name, fams)
				continue
			}
			if len(ty.Codecs) != 4 {
				t.Errorf("%s: %d codecs, want 4 (ours and public, per family)", name, len(ty.Codecs))
			}
		}
		for _, fam := range fams {
			lane, ok := edgeLane(fam.group)
			if !ok || lane.EdgeGroup != fam.group {
				t.Errorf("%s: group %s has no lane", name, fam.group)
			}
			if fam.public == nil || fam.public.Ref == fam.ours.Ref {
				t.Errorf("%s: %s has no public equivalent", name, fam.group)
				continue
			}
			for _, c := range []*Codec{fam.ours, fam.public} {
				if c.Ref.APIVersion != fam.group || c.Def.Ref().APIVersion != fam.group {
					t.Errorf("%s: codec %s (definition %s) in family %s", name, c.Ref, c.Def.Ref(), fam.group)
				}
				for _, f := range c.Fields {
					if (f.Kind == KindRelation || f.Kind == KindBindingList) && f.TargetAPI != fam.group {
						t.Errorf("%s: %s relation %s targets %s", name, c.Ref, f.Attr, f.TargetAPI)
					}
				}
			}
		}
		if len(fams) == 2 && (fams[0].ours == fams[1].ours || fams[0].ours.Def == fams[1].ours.Def) {
			t.Errorf("%s: one codec answers both groups", name)
		}
	}
}

// TestLaneOfHandBuiltData: a Data built with one client answers on that
// client's lane only; the other lane is unavailable and says so.
func TestLaneOfHandBuiltData(t *testing.T) {
	d := &Data{}
	for _, l := range wire.Lanes {
		if lc := d.laneConnOf(l); lc.client != nil || lc.err == nil {
			t.Errorf("lane %s of an unconfigured Data: %+v", l.Name, lc)
		}
	}
	if err := validCreateLane("v1beta2"); err == nil {
		t.Error("create_lane v1beta2 accepted")
	}
	for _, ok := range []string{"", "v1alpha3", "v1beta1"} {
		if err := validCreateLane(ok); err != nil {
			t.Errorf("create_lane %q: %v", ok, err)
		}
	}
}

// TestCreateLaneOneFamily: a type of the v1beta1 family alone refuses a
// create_lane of v1alpha3 at plan, naming its lane, and creates under its
// own ref otherwise (spec/lane-v1beta1.md §13.6 rule 1).
func TestCreateLaneOneFamily(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	ty := *reg.Types["takoform_edge_kv_namespace"]
	ty.Families = []createFamily{ty.Families[1]}
	ctx := context.Background()
	_, refusal := (&Resource{spec: &ty, data: &Data{CreateLane: "v1alpha3"}}).createCodec(ctx, nil, "s")
	if refusal == nil || refusal.code != CodeHostDoesNotSupportForm || !strings.Contains(refusal.err.Error(), wire.V1beta1.Name) {
		t.Errorf("create_lane v1alpha3 for a v1beta1-only type: %+v", refusal)
	}
	for _, lane := range []string{"", "v1beta1"} {
		c, refusal := (&Resource{spec: &ty, data: &Data{CreateLane: lane}}).createCodec(ctx, nil, "s")
		if refusal != nil || c != ty.Families[0].ours {
			t.Errorf("create_lane %q: %v, %+v", lane, c.Ref, refusal)
		}
	}
}
