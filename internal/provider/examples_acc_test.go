package provider_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
)

// repoRoot is the repository root (two levels above this package).
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// tofuBinary is the pinned OpenTofu the acceptance tests use (TestMain).
func tofuBinary(t *testing.T) string {
	p := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if p == "" || os.Getenv("TF_ACC") == "" {
		t.Skip("this test needs OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	return p
}

// devOverrides builds the provider binary into a fresh directory and
// writes a CLI config whose dev_overrides point OpenTofu at it, as a user
// of a local build does (docs/guides/local-build.md). It
// returns the environment to run OpenTofu with.
func devOverrides(t *testing.T) []string {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "terraform-provider-takoform"), "./cmd/terraform-provider-takoform")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "tofu.rc")
	cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"registry.opentofu.org/takoform/takoform\" = %q\n  }\n  direct {}\n}\n", filepath.Join(dir, "bin"))
	if err := os.WriteFile(rc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "TAKOFORM_") {
			env = append(env, kv)
		}
	}
	return env
}

// tofu runs one OpenTofu command in dir and returns its exit code and
// combined output; any exit code but the wanted ones fails the test.
func tofu(t *testing.T, bin, dir string, env []string, want []int, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tofu %s: %v", strings.Join(args, " "), err)
	}
	for _, w := range want {
		if code == w {
			return code, out.String()
		}
	}
	t.Fatalf("tofu %s exited %d:\n%s", strings.Join(args, " "), code, out.String())
	return code, ""
}

// exampleDirs lists examples/resources/* and examples/data-sources/*
// (slash paths relative to examples/).
func exampleDirs(t *testing.T, examples string) []string {
	var out []string
	for _, kind := range []string{"resources", "data-sources"} {
		entries, err := os.ReadDir(filepath.Join(examples, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, kind+"/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestAccExamples applies every resource and data source example through
// the real OpenTofu CLI and the built provider binary against our host, in
// one run: a root configuration calls each example as a module with a
// provider configuration of its own (one space per example, so names do
// not collide). Apply, then a plan must show no changes; then each
// resource's identity import example imports it back (plan: only imports;
// then no changes); then destroy.
// The provider example is validated (its endpoint is a placeholder). Each
// resource type and each data source must have an example. It runs under
// the pinned OpenTofu and, when one is on PATH, Terraform (clis); a
// Terraform before 1.12 skips the identity imports, saying so.
func TestAccExamples(t *testing.T) {
	tools := clis(t)
	env := devOverrides(t)
	for _, c := range tools {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			t.Logf("running under %s %s", c.path, c.version)
			examplesUnder(t, c, env)
		})
	}
}

func examplesUnder(t *testing.T, c cliTool, env []string) {
	bin := c.path
	h := dualHost(t) // the examples cover the types of both families
	src := filepath.Join(repoRoot(t), "examples")
	work := filepath.Join(t.TempDir(), "examples")
	// copy the examples tree; import blocks only work in a root module, so
	// each example's import-by-identity.tf stays out of its module copy
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(work, rel), 0o755)
		}
		if d.Name() == "import-by-identity.tf" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(work, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	const versions = "terraform {\n  required_providers {\n    takoform = { source = \"registry.opentofu.org/takoform/takoform\" }\n  }\n}\n"
	reg := edgeRegistry(t)
	have := map[string]bool{}
	var root strings.Builder
	root.WriteString(versions)
	for i, dir := range exampleDirs(t, work) {
		have[dir] = true
		if err := os.WriteFile(filepath.Join(work, filepath.FromSlash(dir), "versions_test.tf"), []byte(versions), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&root, "\nprovider \"takoform\" {\n  alias    = \"e%d\"\n  endpoint = %q\n  token    = %q\n  space    = %q\n}\n", i, h.URL, hosttest.TokenA1, strings.ReplaceAll(dir, "/", " "))
		fmt.Fprintf(&root, "\nmodule \"e%d\" {\n  source    = \"./%s\"\n  providers = { takoform = takoform.e%d }\n}\n", i, dir, i)
	}
	for name := range reg.Types {
		for _, kind := range []string{"resources", "data-sources"} {
			if !have[kind+"/"+name] {
				t.Errorf("no example examples/%s/%s", kind, name)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(root.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tofu(t, bin, work, env, []int{0}, "get", "-no-color") // installs the local modules; the provider is overridden, so no init
	tofu(t, bin, work, env, []int{0}, "apply", "-auto-approve", "-input=false", "-no-color")
	tofu(t, bin, work, env, []int{0}, "plan", "-detailed-exitcode", "-input=false", "-no-color") // 2: changes
	if c.identityImport() {
		importExamplesByIdentity(t, bin, work, src, env, reg)
	} else {
		t.Logf("skipping the identity import examples: Terraform %d.%d has no identity in import blocks (Terraform 1.12 and later)", c.major, c.minor)
	}
	tofu(t, bin, work, env, []int{0}, "destroy", "-auto-approve", "-input=false", "-no-color")
	tofu(t, bin, filepath.Join(work, "provider"), env, []int{0}, "validate", "-no-color")
}

// importExamplesByIdentity imports every applied example resource back
// through its example's import-by-identity.tf and plans empty again.
func importExamplesByIdentity(t *testing.T, bin, work, src string, env []string, reg *provider.Registry) {
	// The identity import examples: forget each example resource, import it
	// back through its example's import block (addressed into its module,
	// in its module's space), and plan empty again. A revision type's
	// example shows a name of the derived shape, not this run's name.
	var imports strings.Builder
	var forget []string
	for i, dir := range exampleDirs(t, work) {
		name, ok := strings.CutPrefix(dir, "resources/")
		if !ok || reg.Types[name] == nil || reg.Types[name].Revision {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, "resources", name, "import-by-identity.tf"))
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("module.e%d.%s.example", i, name)
		block := strings.Replace(string(b), "to = "+name+".example", "to = "+addr, 1)
		block = strings.Replace(block, fmt.Sprintf("space = %q", provider.ExampleSpace), fmt.Sprintf("space = %q", strings.ReplaceAll(dir, "/", " ")), 1)
		if !strings.Contains(block, addr) || strings.Contains(block, provider.ExampleSpace) {
			t.Fatalf("%s: import-by-identity.tf does not read `to = %s.example` and `space = %q`", name, name, provider.ExampleSpace)
		}
		imports.WriteString(block)
		forget = append(forget, addr)
	}
	tofu(t, bin, work, env, []int{0}, append([]string{"state", "rm", "-no-color"}, forget...)...)
	if err := os.WriteFile(filepath.Join(work, "imports.tf"), []byte(imports.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plan := tofu(t, bin, work, env, []int{0, 2}, "plan", "-input=false", "-no-color", "-out=imports.tfplan")
	if want := fmt.Sprintf("Plan: %d to import, 0 to add, 0 to change, 0 to destroy.", len(forget)); !strings.Contains(plan, want) {
		t.Fatalf("the import examples do not plan %q:\n%s", want, plan)
	}
	tofu(t, bin, work, env, []int{0}, "apply", "-input=false", "-no-color", "imports.tfplan")
	tofu(t, bin, work, env, []int{0}, "plan", "-detailed-exitcode", "-input=false", "-no-color")
}
