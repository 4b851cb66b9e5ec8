package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
