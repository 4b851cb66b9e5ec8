// Package testref finds the public specification's reference data
// (../shared/reference/takoform-v1alpha3 beside the repository) for
// interoperability tests, and skips a test, saying so, where it is absent.
package testref

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the reference data directory or skips t when it is absent.
func Dir(t testing.TB) string {
	t.Helper()
	dir, ok := Find()
	if !ok {
		t.Skip("reference data ../shared/reference/takoform-v1alpha3 is absent beside the repository; skipping the interoperability check")
	}
	return dir
}

// ConformanceDir returns the public host conformance corpus's data
// (../shared/reference/takoform-v1alpha3-conformance: the second
// definition version of ModuleWorker, spec/conformance-probe.md §5) or
// skips t when it is absent.
func ConformanceDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(Dir(t)), "takoform-v1alpha3-conformance")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skip("reference data ../shared/reference/takoform-v1alpha3-conformance is absent beside the repository; skipping the interoperability check")
	}
	return dir
}

// Find locates the reference data directory by walking up from the working
// directory to the module root (the directory holding go.mod).
func Find() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			ref := filepath.Join(filepath.Dir(d), "shared", "reference", "takoform-v1alpha3")
			if st, err := os.Stat(ref); err == nil && st.IsDir() {
				return ref, true
			}
			return "", false
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// V1beta1Dir returns the public v1beta1 family's data
// (../shared/reference/takoform-v1beta1: the 15 Forms of
// edge.forms.takoform.com/v1beta1 with their Interfaces and Bindings,
// spec/lane-v1beta1.md §6.3) or skips t when it is absent.
func V1beta1Dir(t testing.TB) string {
	t.Helper()
	dir, ok := Find()
	if ok {
		dir = filepath.Join(filepath.Dir(dir), "takoform-v1beta1")
	}
	if st, err := os.Stat(dir); !ok || err != nil || !st.IsDir() {
		t.Skip("reference data ../shared/reference/takoform-v1beta1 is absent beside the repository; skipping the v1beta1 family check")
	}
	return dir
}
