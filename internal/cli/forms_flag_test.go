package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/testref"
)

// TestServeRefusesCollidingFamilies: `host serve --forms builtin --forms
// <public family>` stops before listening, naming both files of a pair
// that share an identity line and definition version.
func TestServeRefusesCollidingFamilies(t *testing.T) {
	ref := testref.Dir(t)
	var out, errOut bytes.Buffer
	code := Main([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t",
		"--forms", "builtin", "--forms", ref}, &out, &errOut)
	msg := errOut.String()
	if code == 0 || !strings.Contains(msg, filepath.Join(ref, "forms/candidates/edge/v1alpha1/module-worker/definition.json")) ||
		!strings.Contains(msg, "is also defined by builtin/") {
		t.Fatalf("exit %d, stderr:\n%s", code, msg)
	}
	if out.Len() != 0 {
		t.Fatalf("it started serving: %s", out.String())
	}
}
