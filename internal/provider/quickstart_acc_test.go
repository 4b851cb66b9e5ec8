package provider_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/takoform/takoform/internal/hosttest"
)

// quickstartDir copies examples/quickstart (main.tf and its module
// sources) into a new working directory and runs init with c. The provider
// is served in-process, so the host (TAKOFORM_* in the example) comes from
// an OpenTofu override file merged into its empty provider block, and the
// module paths are made absolute (${abspath(path.module)}): OpenTofu
// evaluates them, but the in-process provider does not share its working
// directory.
func quickstartDir(t *testing.T, h *hosttest.Host, space string, c cliTool) *tofuDir {
	t.Helper()
	d := &tofuDir{t: t, dir: t.TempDir(), reg: edgeRegistry(t), bin: c.path}
	src := filepath.Join("..", "..", "examples", "quickstart")
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(d.dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		if rel == "main.tf" {
			b = []byte(strings.ReplaceAll(string(b), "${path.module}/", "${abspath(path.module)}/"))
		}
		return os.WriteFile(filepath.Join(d.dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	override := fmt.Sprintf("provider \"takoform\" {\n  endpoint = %q\n  token    = %q\n  space    = %q\n}\n", h.URL, hosttest.TokenA1, space)
	if err := os.WriteFile(filepath.Join(d.dir, "host_override.tf"), []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
	d.init()
	return d
}

// savedPlan runs tofu plan -out and returns the plan's JSON (tofu show
// -json) and its decoded form.
func (d *tofuDir) savedPlan() ([]byte, *tfjson.Plan) {
	d.t.Helper()
	d.must("plan", "-input=false", "-no-color", "-out=plan.tfplan")
	out, err := d.start("show", "-json", "plan.tfplan").wait()
	if err != nil {
		d.t.Fatalf("tofu show -json: %v\n%s", err, out)
	}
	var p tfjson.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		d.t.Fatalf("tofu show -json: %v\n%s", err, out)
	}
	return []byte(out), &p
}

// requireNoOpImports: every planned change is an import with no other
// action, and every one of want is imported.
func requireNoOpImports(t *testing.T, p *tfjson.Plan, want []string) {
	t.Helper()
	var imported []string
	for _, rc := range p.ResourceChanges {
		if !rc.Change.Actions.NoOp() || rc.Change.Importing == nil {
			t.Errorf("%s plans %v (importing: %v); want a no-op import", rc.Address, rc.Change.Actions, rc.Change.Importing != nil)
			continue
		}
		imported = append(imported, rc.Address)
	}
	sort.Strings(imported)
	sort.Strings(want)
	if strings.Join(imported, " ") != strings.Join(want, " ") {
		t.Errorf("imported %v, want %v", imported, want)
	}
}

// TestAccQuickstartImportPlansEmpty: every resource of examples/quickstart
// (all 15 Edge types, the bundles authored from local files and the
// revisions with derived names) applied in one working directory and
// imported into a fresh one with the same configuration plans only no-op
// imports; after that apply, the plan is empty
// (spec/decisions/0007-orphan-recovery.md rule 3). It runs under the
// pinned OpenTofu and, when one is on PATH, Terraform (clis).
func TestAccQuickstartImportPlansEmpty(t *testing.T) {
	t.Parallel()
	for _, c := range clis(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			t.Logf("running under %s %s", c.path, c.version)
			quickstartImportPlansEmpty(t, c)
		})
	}
}

func quickstartImportPlansEmpty(t *testing.T, c cliTool) {
	const space = "Prod North"
	h := dualHost(t) // the quickstart creates in the v1beta1 family
	first := quickstartDir(t, h, space, c)
	first.must("apply", "-auto-approve", "-input=false", "-no-color")
	types := map[string]bool{}
	var blocks strings.Builder
	var addrs []string
	for _, e := range first.state() {
		types[e.Type] = true
		addrs = append(addrs, e.Address)
		fmt.Fprintf(&blocks, "import {\n  to = %s\n  id = %q\n}\n", e.Address, fmt.Sprint(e.Attrs["space"])+"/"+fmt.Sprint(e.Attrs["name"]))
	}
	if len(types) != 15 {
		t.Fatalf("examples/quickstart holds %d of the 15 Edge types: %v", len(types), types)
	}
	second := quickstartDir(t, h, space, c)
	if err := os.WriteFile(filepath.Join(second.dir, "imports.tf"), []byte(blocks.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plan := second.savedPlan()
	requireNoOpImports(t, plan, addrs)
	second.must("apply", "-input=false", "-no-color", "plan.tfplan")
	second.planEmpty()
}
