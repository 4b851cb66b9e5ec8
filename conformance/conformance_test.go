package conformance_test

import (
	"context"
	"os"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestConformance runs every registered check against our host on a real
// SQLite file, one subtest per check ID (`go test -v` lists them).
func TestConformance(t *testing.T) {
	runAll(t, hosttest.Start(t, hosttest.Options{Probe: true, Catalog: testCatalog(t)}))
}

// TestConformanceWithDataPlane runs every check against our host with its
// data plane, on real workerd and without any engine: whatever the data
// plane's state, every lane answer stays what it is (spec/runtime-v1.md
// §0.1: the control plane changes only where that page says).
func TestConformanceWithDataPlane(t *testing.T) {
	t.Run("workerd", func(t *testing.T) {
		runAll(t, hosttest.Start(t, hosttest.Options{Probe: true, Catalog: testCatalog(t), Workerd: enginetest.Binary(t)}))
	})
	t.Run("no-workerd", func(t *testing.T) {
		runAll(t, hosttest.Start(t, hosttest.Options{Probe: true, Catalog: testCatalog(t), Workerd: hosttest.NoWorkerd}))
	})
}

// runAll runs every registered check against h with the probe on lane
// v1alpha3, one subtest per check ID; a skip fails.
func runAll(t *testing.T, h *hosttest.Host) {
	runLane(t, h, wire.DefaultLane)
}

// runLane is runAll on lane: every check of the lane (ChecksFor) must
// pass; a skip against our own host is a failure.
func runLane(t *testing.T, h *hosttest.Host, lane wire.Lane) {
	ctx := context.Background()
	env, err := conformance.NewEnvOptions(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, true, client.Options{Lane: lane})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conformance.ChecksFor(lane) {
		t.Run(c.ID, func(t *testing.T) {
			r := conformance.RunCheck(ctx, env, c)
			switch {
			case r.Skipped:
				t.Fatalf("skipped against our own host: %v", r.Err)
			case r.Err != nil:
				t.Fatalf("%s (%s): %v", c.ID, c.Summary, r.Err)
			}
		})
	}
}

func TestRegisteredChecksAreRequiredIDs(t *testing.T) {
	required := map[string]bool{}
	for _, id := range conformance.RequiredIDs {
		required[id] = true
	}
	if len(required) != 114 {
		t.Fatalf("Appendix A lists 114 IDs; the table holds %d", len(required))
	}
	for _, c := range conformance.Checks() {
		if !required[c.ID] {
			t.Errorf("check %s is not an Appendix A ID", c.ID)
		}
		if c.Summary == "" || c.Group == "" || c.Run == nil {
			t.Errorf("check %s lacks a summary, group or body", c.ID)
		}
	}
}

// testCatalog is the built-in Edge family (both editions) plus
// testdata/forms and testdata/forms-v1beta1: a second definition version
// of two Edge kinds in each Edge group, and a kind of another group.
func testCatalog(t *testing.T) *form.Catalog {
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"testdata/forms", "testdata/forms-v1beta1"} {
		extra, err := host.LoadCatalog(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range extra.Forms() {
			if cat, err = cat.AddForm(in.Definition, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	return cat
}
