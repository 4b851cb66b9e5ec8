package conformance_test

import (
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// The checks lane v1beta1 adds or changes (spec/lane-v1beta1.md §14) fail
// on our host broken in the rule each holds: each passes on the host as
// it is (TestConformanceTwoLanesOneHost) and fails here.

// startV1beta1 starts our host with the public v1beta1 family on lane
// v1beta1, broken by family and wrap where they are set.
func startV1beta1(t *testing.T, family func(host.Family) host.Family, wrap func(http.Handler) http.Handler) *hosttest.Host {
	t.Helper()
	cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{testref.V1beta1Dir(t)}, func(dir string) fs.FS { return os.DirFS(dir) }))
	if err != nil {
		t.Fatal(err)
	}
	o := hosttest.Options{Probe: true, Catalog: cat, Lanes: lanes, Wrap: wrap}
	if family != nil {
		o.Family = family(host.DefaultFamily(cat))
	}
	return hosttest.Start(t, o)
}

// assetsRefused is a host that does not take WorkerVersion.assets.
type assetsRefused struct{ host.Family }

func (f assetsRefused) CheckCommit(tx store.Tx, def *form.Definition, res *store.Resource, creating bool) error {
	if def.Ref().Kind == "WorkerVersion" && strings.Contains(string(res.Spec), `"assets"`) {
		return wire.Errorf(wire.InvalidArgument, "assets are not served here")
	}
	return f.Family.CheckCommit(tx, def, res, creating)
}

// ledgerAlwaysReady is a host that renders every SQLiteMigrationApplication
// Ready, whatever the database's ledger holds.
type ledgerAlwaysReady struct{ host.Family }

func (f ledgerAlwaysReady) Render(tx store.Tx, def *form.Definition, res *store.Resource) ([]wire.Condition, map[string]any, error) {
	conds, outs, err := f.Family.Render(tx, def, res)
	if def.Ref().Kind == "SQLiteMigrationApplication" {
		conds = []wire.Condition{{Type: "Ready", Status: "True", Reason: "Available"}}
	}
	return conds, outs, err
}

func TestV1beta1ChecksFailOnABrokenHost(t *testing.T) {
	wrongLimits := startV1beta1(t, nil, rewriteAnswers(
		func(r *http.Request) bool {
			return strings.HasSuffix(r.URL.Path, wire.V1beta1.APIBase+"/support/forms")
		},
		func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), `"maximumBundleFiles":16384`, `"maximumBundleFiles":4096`))
		}))
	if err := runLaneCheck(t, wrongLimits, wire.V1beta1, "support-profiles-present"); err == nil || !strings.Contains(err.Error(), "maximumBundleFiles") {
		t.Errorf("support-profiles-present on a host advertising 4096 files for every artifact-backed Form: %v", err)
	}
	noAssets := startV1beta1(t, func(f host.Family) host.Family { return assetsRefused{f} }, nil)
	if err := runLaneCheck(t, noAssets, wire.V1beta1, "static-asset-spa-paths"); err == nil || !strings.Contains(err.Error(), "assets are not served here") {
		t.Errorf("static-asset-spa-paths on a host refusing assets: %v", err)
	}
	ready := startV1beta1(t, func(f host.Family) host.Family { return ledgerAlwaysReady{f} }, nil)
	if err := runLaneCheck(t, ready, wire.V1beta1, "sqlite-migration-ledger-readiness"); err == nil || !strings.Contains(err.Error(), "Reconciling") {
		t.Errorf("sqlite-migration-ledger-readiness on a host rendering every application Ready: %v", err)
	}
}
