package conformance_test

import (
	"io/fs"
	"os"
	"testing"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
)

// TestConformancePublicFamily runs every check against our host the way
// the public runner runs a host (spec/conformance-probe.md §5): serving
// the public family plus the conformance corpus's Forms (installed as
// `takoform host serve --forms DIR --forms DIR --conformance-probe`
// installs them), over loopback, with the probe, on a fresh plane.
func TestConformancePublicFamily(t *testing.T) {
	ref, extra := testref.Dir(t), testref.ConformanceDir(t)
	cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{ref, extra}, func(dir string) fs.FS { return os.DirFS(dir) }))
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, hosttest.Start(t, hosttest.Options{Probe: true, Catalog: cat, Lanes: lanes}))
}
