package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// cliTool is one infrastructure CLI an acceptance test drives: the pinned
// OpenTofu, or a Terraform found on PATH.
type cliTool struct {
	name         string // the subtest name: "opentofu" or "terraform"
	path         string
	version      string // as `version -json` reports it, e.g. "1.11.4"
	major, minor int
}

// identityImport reports whether import blocks may carry an identity
// (OpenTofu 1.12, Terraform 1.12 and later; docs/resources/*.md "Import").
func (c cliTool) identityImport() bool {
	return c.name == "opentofu" || c.major > 1 || (c.major == 1 && c.minor >= 12)
}

// The oldest Terraform the provider supports (README.md "make demo",
// scripts/findtofu.sh).
const terraformMinMajor, terraformMinMinor = 1, 11

var (
	terraformOnce sync.Once
	terraformCLI  *cliTool
	terraformWhy  string // why there is none
)

// findTerraform looks once for `terraform` on PATH at 1.11 or later. It
// returns nil and the reason when there is none.
func findTerraform() (*cliTool, string) {
	terraformOnce.Do(func() {
		p, err := exec.LookPath("terraform")
		if err != nil {
			terraformWhy = "no terraform on PATH"
			return
		}
		c, err := cliAt("terraform", p)
		switch {
		case err != nil:
			terraformWhy = err.Error()
		case c.major < terraformMinMajor || (c.major == terraformMinMajor && c.minor < terraformMinMinor):
			terraformWhy = fmt.Sprintf("%s is Terraform %s, older than %d.%d", p, c.version, terraformMinMajor, terraformMinMinor)
		default:
			terraformCLI = &c
		}
	})
	return terraformCLI, terraformWhy
}

// cliAt reads the version of the CLI at path (`version -json`).
func cliAt(name, path string) (cliTool, error) {
	cmd := exec.Command(path, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err == nil {
		// a CLI may print a warning (about its CLI configuration) first
		err = json.Unmarshal(out[max(0, bytes.IndexByte(out, '{')):], &v)
	}
	c := cliTool{name: name, path: path, version: v.Version}
	if err == nil {
		_, err = fmt.Sscanf(v.Version, "%d.%d", &c.major, &c.minor)
	}
	if err != nil {
		return c, fmt.Errorf("%s version -json: %w", path, err)
	}
	return c, nil
}

// terraformNote is the one line an acceptance run prints when the tests
// that also run under Terraform run under OpenTofu only; "" when
// Terraform is found.
func terraformNote() string {
	if _, why := findTerraform(); why != "" {
		return fmt.Sprintf("acceptance: %s (need Terraform >= %d.%d): the quickstart, examples and public-state tests run under OpenTofu only", why, terraformMinMajor, terraformMinMinor)
	}
	return ""
}

// clis is the pinned OpenTofu (skipping t without it, as accHost does) and,
// when findTerraform finds one, Terraform: the CLIs the tests that carry
// the main job run under, each as a subtest named for it.
func clis(t *testing.T) []cliTool {
	t.Helper()
	tofu := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tofu == "" || os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests need OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	c, err := cliAt("opentofu", tofu)
	if err != nil {
		t.Fatal(err)
	}
	out := []cliTool{c}
	if tf, _ := findTerraform(); tf != nil {
		out = append(out, *tf)
	}
	return out
}
