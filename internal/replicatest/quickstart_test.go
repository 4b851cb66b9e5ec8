package replicatest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/replicatest"
)

// TestQuickstartThroughOpenTofu deploys examples/quickstart with the real
// OpenTofu CLI and our provider to two replicas behind the round-robin
// proxy, the steps of `make demo` (scripts/demo.sh): apply, an empty plan,
// a rollout of changed code with an empty plan after it, destroy.
func TestQuickstartThroughOpenTofu(t *testing.T) {
	tofu, err := filepath.Abs("../../tools/opentofu-v1.12.6/tofu")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tofu); err != nil {
		t.Skip("the quickstart needs OpenTofu: run scripts/opentofu.sh (make test does)")
	}
	c := cluster(t, 2, replicatest.Options{})
	dir := t.TempDir()
	provider := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(provider, "terraform-provider-takoform"), "github.com/takoform/takoform/cmd/terraform-provider-takoform")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "tofu.rc")
	cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", "registry.opentofu.org/takoform/takoform", provider)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "quickstart")
	if err := os.CopyFS(app, os.DirFS("../../examples/quickstart")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".terraform", "terraform.tfstate", "terraform.tfstate.backup"} {
		_ = os.RemoveAll(filepath.Join(app, p))
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1",
		"TAKOFORM_ENDPOINT="+c.URL, "TAKOFORM_SPACE=quickstart", "TAKOFORM_TOKEN="+hosttest.TokenA1)
	tf := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(tofu, append(args, "-no-color")...)
		cmd.Dir, cmd.Env = app, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return out.String(), 0
		case errors.As(err, &exit):
			return out.String(), exit.ExitCode()
		}
		t.Fatalf("tofu %s: %v", args[0], err)
		return "", 0
	}
	must := func(step string, args ...string) {
		t.Helper()
		if out, code := tf(args...); code != 0 {
			t.Fatalf("%s: tofu exited %d:\n%s", step, code, out)
		}
	}
	empty := func(step string) {
		t.Helper()
		if out, code := tf("plan", "-detailed-exitcode"); code != 0 {
			t.Fatalf("%s: the plan is not empty (exit %d):\n%s", step, code, out)
		}
	}
	must("apply", "apply", "-auto-approve")
	empty("plan after apply")
	src := filepath.Join(app, "src", "worker.js")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(code), `"quickstart v1"`, `"quickstart v2"`, 1)
	if changed == string(code) {
		t.Fatal("examples/quickstart/src/worker.js no longer says \"quickstart v1\"; update the rollout edit (scripts/demo.sh makes the same one)")
	}
	if err := os.WriteFile(src, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := tf("plan", "-detailed-exitcode"); code != 2 {
		t.Fatalf("changed code plans no rollout (exit %d):\n%s", code, out)
	}
	must("rollout", "apply", "-auto-approve")
	empty("plan after the rollout")
	must("destroy", "destroy", "-auto-approve")
	if out, code := tf("state", "list"); code != 0 || strings.TrimSpace(out) != "" {
		t.Fatalf("state after destroy (exit %d): %s", code, out)
	}
}
