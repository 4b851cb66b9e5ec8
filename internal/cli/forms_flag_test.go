package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host"
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
	// The built-in v1beta1 edition beside the public v1beta1 family is
	// refused the same way, and the refusal names the edition to keep.
	beta := testref.V1beta1Dir(t)
	out.Reset()
	errOut.Reset()
	code = Main([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t",
		"--forms", "builtin", "--forms", beta}, &out, &errOut)
	msg = errOut.String()
	if code == 0 || !strings.Contains(msg, "is also defined by builtin/v1beta1/forms/") || !strings.Contains(msg, "--forms builtin/v1alpha1 or --forms builtin/v1beta1 installs only that one") {
		t.Fatalf("builtin beside the public v1beta1 family: exit %d, stderr:\n%s", code, msg)
	}
}

// TestServeThePublicRunnersSetup: `host serve --forms <public family>
// --forms <conformance corpus> --conformance-probe` serves the 12 public
// Forms, ModuleWorker 0.2.0 and the probe's second-group Form under its
// declared ref (spec/conformance-probe.md §5).
func TestServeThePublicRunnersSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	ref := testref.Dir(t)
	extra := testref.ConformanceDir(t)
	addr := freePort(t)
	args := strings.Join([]string{"host", "serve", "--listen", addr, "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "tok",
		"--forms", ref, "--forms", extra, "--conformance-probe"}, "\x1f")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+args)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	c := connect(t, addr)
	profiles, err := c.SupportForms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mw020, secondGroup bool
	for _, p := range profiles.Profiles {
		r := p.FormRef
		mw020 = mw020 || (r.Kind == "ModuleWorker" && r.DefinitionVersion == "0.2.0" && r.SchemaDigest == "sha256:21b1a82a627eca790d7516abe9b602496a47b42ca02aa97ab0b6c809fb6245c5")
		secondGroup = secondGroup || *r == host.ProbeSecondGroupRef
	}
	if len(profiles.Profiles) != 14 || !mw020 || !secondGroup {
		t.Fatalf("%d forms served (ModuleWorker 0.2.0 %v, second group %v); want the 12 public ones and both conformance Forms", len(profiles.Profiles), mw020, secondGroup)
	}
}
