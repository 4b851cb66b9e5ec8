package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/testref"
)

// tofuSchemaJSON builds this repository's provider and asks a real
// OpenTofu for `providers schema -json` through a dev_overrides CLI config.
func tofuSchemaJSON(t *testing.T) []byte {
	tofu, _ := filepath.Abs("../../tools/opentofu-v1.12.6/tofu")
	if _, err := os.Stat(tofu); err != nil {
		t.Skip("OpenTofu is not built (scripts/opentofu.sh, run by make test)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "terraform-provider-takoform"), "../../cmd/terraform-provider-takoform")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build provider: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "tofu.rc")
	os.WriteFile(rc, []byte(`provider_installation {
  dev_overrides { "registry.opentofu.org/takoform/takoform" = "`+bin+`" }
  direct {}
}
`), 0o644)
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "main.tf"), []byte(`terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}
`), 0o644)
	cmd := exec.Command(tofu, "providers", "schema", "-json")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tofu providers schema -json: %v\n%s", err, stderr.String())
	}
	return out
}

// TestSurfaceCheckOnTofuSchema runs `takoform surface check` on the
// schema a real OpenTofu reports for our provider: clean as it is, and
// exit 1 naming the rule once an attribute is removed from a copy.
func TestSurfaceCheckOnTofuSchema(t *testing.T) {
	schema := tofuSchemaJSON(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "schema.json")
	os.WriteFile(good, schema, 0o644)
	baseline := "../../internal/provider/testdata/schema-baseline.json"
	code, out, errOut := run("surface", "check", "--baseline", baseline, "--schema", good, "--provider", "takoform/takoform")
	if code != 0 || !strings.Contains(out, "0 findings") {
		t.Fatalf("unmutated schema: exit %d\n%s\n%s", code, out, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal(schema, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc["provider_schemas"].(map[string]any) {
		rs := p.(map[string]any)["resource_schemas"].(map[string]any)
		attrs := rs["takoform_worker_cron_trigger"].(map[string]any)["block"].(map[string]any)["attributes"].(map[string]any)
		delete(attrs, "cron")
	}
	mutated, _ := json.Marshal(doc)
	bad := filepath.Join(dir, "mutated.json")
	os.WriteFile(bad, mutated, 0o644)
	code, out, _ = run("surface", "check", "--baseline", baseline, "--schema", bad, "--provider", "takoform/takoform", "--json")
	if code != 1 || !strings.Contains(out, `"rule": "ATTRIBUTE_REMOVED"`) || !strings.Contains(out, "takoform_worker_cron_trigger_v2") {
		t.Fatalf("mutated schema: exit %d\n%s", code, out)
	}
}

// TestSurfaceCheckAgainstPublicV1beta1 runs `takoform surface check` of
// this build's provider against public provider 2.1.1's live surface (the
// takoform-v1beta1 data set's terraform-surface-v1beta1-derived.json, the
// floor for interoperability: spec/lane-v1beta1.md §13.5): no findings.
// A copy lacking nothing but renamed to a type this build does not have
// is a finding, so the check is not vacuous. It skips, saying so, when the
// reference data is absent.
func TestSurfaceCheckAgainstPublicV1beta1(t *testing.T) {
	derived := filepath.Join(testref.V1beta1Dir(t), "terraform-surface-v1beta1-derived.json")
	code, out, errOut := run("surface", "check", "--baseline", derived, "--baseline-format", "reference")
	if code != 0 || !strings.Contains(out, "surface: 15 types and 0 data sources checked") || !strings.Contains(out, "; 0 findings") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	data, err := os.ReadFile(derived)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["takoform_static_asset_bundle_v2"] = doc["takoform_static_asset_bundle"]
	mutated, _ := json.Marshal(doc)
	bad := filepath.Join(t.TempDir(), "derived.json")
	if err := os.WriteFile(bad, mutated, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run("surface", "check", "--baseline", bad, "--baseline-format", "reference", "--json")
	if code != 1 || !strings.Contains(out, `"rule": "TYPE_REMOVED"`) {
		t.Fatalf("a type this build lacks: exit %d\n%s", code, out)
	}
	if code, _, _ := run("surface", "check", "--baseline", derived, "--baseline-format", "tf"); code == 0 {
		t.Error("an unknown --baseline-format was accepted")
	}
}
