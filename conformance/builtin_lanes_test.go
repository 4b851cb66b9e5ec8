package conformance_test

import (
	"testing"

	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestConformanceBuiltinFamilyOnLaneV1beta1 runs every check of lane
// v1beta1 against our host serving its built-in family — our v1beta1
// edition on that lane (repo decision 0057) — with its data plane on real
// workerd, so sqlite-migration-ledger-readiness's files run on the
// database's own file (spec/runtime-v1.md §9.3). Lane v1alpha3 of the
// same catalog is TestConformanceWithDataPlane's.
func TestConformanceBuiltinFamilyOnLaneV1beta1(t *testing.T) {
	runLane(t, hosttest.Start(t, hosttest.Options{Probe: true, Catalog: testCatalog(t), Workerd: enginetest.Binary(t)}), wire.V1beta1)
}
