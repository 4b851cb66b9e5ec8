package sqlite

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// KeyState's pins are PinsToName's, in its order (by source UID, then each
// source's pin order), though its one statement promises no order: two
// sources, inserted out of UID order, each pinning the target twice.
func TestKeyStatePinsInOrder(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	target := testResource("target", "uid-t")
	pin := func(ptr string) store.Pin {
		return store.Pin{Pointer: ptr, RelationPointer: "/refs/*", TargetAPIVersion: target.APIVersion,
			TargetKind: target.Kind, TargetName: target.Name, TargetUID: target.UID, TargetFormRef: target.FormRef}
	}
	err := s.Update(t.Context(), func(tx store.Tx) error {
		for _, r := range []*store.Resource{target, testResource("b", "uid-b"), testResource("a", "uid-a")} {
			if err := tx.CreateResource(r); err != nil {
				return err
			}
		}
		if err := tx.ReplacePins("uid-b", []store.Pin{pin("/refs/1"), pin("/refs/0")}); err != nil {
			return err
		}
		return tx.ReplacePins("uid-a", []store.Pin{pin("/refs/9"), pin("/refs/2")})
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(tx store.Tx) error {
		want, err := tx.PinsToName(target.Tenant, target.Space, target.APIVersion, target.Kind, target.Name)
		if err != nil {
			return err
		}
		st, err := tx.KeyState(target.Key, nil)
		if err != nil {
			return err
		}
		if len(want) != 4 || want[0].SourceUID != "uid-a" || want[0].Pointer != "/refs/9" {
			t.Fatalf("PinsToName = %+v, want uid-a's two pins in their order, then uid-b's", want)
		}
		if !reflect.DeepEqual(st.PinsTo, want) {
			t.Errorf("KeyState pins = %+v\nwant %+v", st.PinsTo, want)
		}
		if st.Resource == nil || st.Resource.UID != target.UID || st.Replay != nil || st.Pending != nil {
			t.Errorf("KeyState = %+v, want the target and no record or operation", st)
		}
		return nil
	}
	if err := s.View(t.Context(), check); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(t.Context(), check); err != nil {
		t.Fatal(err)
	}
}

// sortPins orders by source UID, then pin order, whatever order the rows
// came in.
func TestSortPins(t *testing.T) {
	pins := []store.Pin{{SourceUID: "b", Pointer: "b0"}, {SourceUID: "a", Pointer: "a1"}, {SourceUID: "a", Pointer: "a0"}, {SourceUID: "b", Pointer: "b1"}}
	sortPins(pins, []int64{0, 1, 0, 1})
	var got []string
	for _, p := range pins {
		got = append(got, p.Pointer)
	}
	if want := []string{"a0", "a1", "b0", "b1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sortPins = %v, want %v", got, want)
	}
}
