// Package enginetest finds the workerd binary for tests that run workers
// on the real engine (spec/runtime-v1.md §0.3): under CI=true a missing
// binary fails the test; elsewhere the test is skipped, saying how to
// install it.
package enginetest

import (
	"errors"
	"os"
	"testing"

	"github.com/takoform/takoform/host/runtime/engine"
)

// Binary returns the workerd binary (TAKOFORM_WORKERD, tools/, PATH:
// engine.Find), or fails (CI=true) or skips the test.
func Binary(t testing.TB) string {
	t.Helper()
	p, _, err := engine.Find("")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" || !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("workerd is required here: %v", err)
	}
	t.Skipf("workerd not installed (%v); run ./scripts/workerd.sh or set %s", err, engine.EnvBinary)
	return ""
}
