package cli

import (
	"strings"
	"testing"
)

// TestRecoverSummary: the closing line says what happened.
func TestRecoverSummary(t *testing.T) {
	for _, c := range []struct {
		n         int
		out, want string
	}{
		{0, "", "nothing to import"},
		{0, "imports.tf", "nothing to import"},
		{2, "imports.tf", "2 planned create(s) already on the host; the import blocks are written to imports.tf: review it, then run tofu apply"},
		{2, "", "review the import blocks, save them beside the configuration"},
	} {
		if got := recoverSummary(c.n, c.out); !strings.Contains(got, c.want) {
			t.Errorf("recoverSummary(%d, %q) = %q; want %q", c.n, c.out, got, c.want)
		}
	}
}

// TestSurfaceSchemaPlaceholder: --help names the --schema value FILE.
func TestSurfaceSchemaPlaceholder(t *testing.T) {
	for _, sub := range []string{"snapshot", "check"} {
		_, out, _ := run("surface", sub, "--help")
		if !strings.Contains(out, "--schema FILE") {
			t.Errorf("surface %s --help: want --schema FILE in\n%s", sub, out)
		}
	}
}
