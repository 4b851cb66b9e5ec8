package engine

import (
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/projection"
)

// TestEveryProjectionIsSupplied: each kind of the one table Projections
// names a module that package projection supplies and a factory that
// module exports, so the generated entry's import resolves in workerd.
func TestEveryProjectionIsSupplied(t *testing.T) {
	mods := projection.Modules()
	for kind, p := range Projections {
		src, ok := mods[p.Module]
		if !ok {
			t.Errorf("kind %s: module %s is not among projection.Modules()", kind, p.Module)
			continue
		}
		if !strings.Contains(src, "export function "+p.Factory+"(") {
			t.Errorf("kind %s: module %s does not export function %s", kind, p.Module, p.Factory)
		}
	}
}
