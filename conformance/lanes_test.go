package conformance_test

import (
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// TestConformanceTwoLanesOneHost runs every check on lane v1alpha3 and
// again on lane v1beta1 against one host process, installed as
// `takoform host serve --forms REF/takoform-v1alpha3 --forms
// REF/takoform-v1alpha3-conformance --forms REF/takoform-v1beta1 --forms
// REF/takoform-v1beta1-conformance --conformance-probe` installs it
// (spec/lane-v1beta1.md §2.5, §14; repo decision 0053). The two runs share
// the plane and never collide: each run works in a space of its own
// (Env.Space), and what spans spaces — native ids, hostnames — is fresh
// per run (random suffixes). It skips, saying so, where the reference
// data is absent (internal/testref).
func TestConformanceTwoLanesOneHost(t *testing.T) {
	dirs := []string{testref.Dir(t), testref.ConformanceDir(t), testref.V1beta1Dir(t), testref.V1beta1ConformanceDir(t)}
	cat, lanes, err := host.LoadFamilies(host.FamilySources(dirs, func(dir string) fs.FS { return os.DirFS(dir) }))
	if err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, hosttest.Options{Probe: true, Catalog: cat, Lanes: lanes})
	for _, l := range wire.Lanes {
		t.Run(l.Version(), func(t *testing.T) { runLane(t, h, l) })
	}
}

// TestLaneV1beta1ChecksAreItsAppendix: the checks of lane v1beta1 are the
// 116 IDs of spec/lane-v1beta1.md Appendix A, the two new ones right after
// manifest-reference-is-not-a-capability.
func TestLaneV1beta1ChecksAreItsAppendix(t *testing.T) {
	ids := conformance.RequiredIDsFor(wire.V1beta1)
	at := slices.Index(ids, "manifest-reference-is-not-a-capability")
	if len(ids) != 116 || at < 0 || at+2 >= len(ids) || ids[at+1] != "static-asset-spa-paths" || ids[at+2] != "sqlite-migration-ledger-readiness" {
		t.Fatalf("lane v1beta1's Appendix A: %d IDs, %v", len(ids), ids)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	checks := conformance.ChecksFor(wire.V1beta1)
	if len(checks) != len(want) {
		t.Fatalf("%d checks on lane v1beta1, want %d", len(checks), len(want))
	}
	for _, c := range checks {
		if !want[c.ID] {
			t.Errorf("check %s is not in lane v1beta1's Appendix A", c.ID)
		}
	}
}
