package replicatest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/forms/edge"
)

// ConformanceForms writes a forms directory holding the built-in Edge
// family plus the conformance extras under extra (a second definition
// version of one Edge kind and the same kind in another group; the set
// conformance/conformance_test.go installs in-process) and returns it.
func ConformanceForms(t testing.TB, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "forms")
	if err := os.CopyFS(filepath.Join(dir, "edge"), edge.Family()); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "extra"), os.DirFS(extra)); err != nil {
		t.Fatal(err)
	}
	return dir
}
