package replicatest_test

import (
	"context"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/replicatest"
)

// TestConformanceAcrossReplicas runs every conformance check (probe and
// second definition version included) against two replicas on one
// database behind the round-robin proxy: consecutive requests of one check
// land on different replicas, so every check's prepare/apply, replay,
// operation poll and read crosses a process boundary.
func TestConformanceAcrossReplicas(t *testing.T) {
	c := cluster(t, 2, replicatest.Options{Probe: true, Forms: replicatest.ConformanceForms(t, "../../conformance/testdata/forms")})
	ctx := context.Background()
	env, err := conformance.NewEnv(ctx, c.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, true)
	if err != nil {
		t.Fatal(err)
	}
	checks := conformance.Checks()
	if len(checks) != len(conformance.RequiredIDs) {
		t.Fatalf("%d checks registered, Appendix A lists %d", len(checks), len(conformance.RequiredIDs))
	}
	for _, ch := range checks {
		t.Run(ch.ID, func(t *testing.T) {
			r := conformance.RunCheck(ctx, env, ch)
			switch {
			case r.Skipped:
				t.Fatalf("skipped against two replicas: %v", r.Err)
			case r.Err != nil:
				t.Fatalf("%s (%s): %v", ch.ID, ch.Summary, r.Err)
			}
		})
	}
	for _, r := range c.Replicas {
		t.Logf("replica %d served %d requests", r.Index, r.Served.Load())
		if len(c.Replicas) > 1 && r.Served.Load() == 0 {
			t.Errorf("replica %d served no request: the checks did not cross replicas", r.Index)
		}
	}
}
