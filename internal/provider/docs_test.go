package provider_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// TestDocsAreCurrent renders the provider documentation into a temporary
// directory exactly as `make docs` does (scripts/docs.sh: tfplugindocs over
// this build's `tofu providers schema -json`, the templates and the
// examples; the hand-written guides of templates/guides/ are copied as they
// are into docs/guides/) and fails when docs/ differs, naming each stale
// page and where to edit it. It also
// holds the schema document to 0 empty descriptions: the provider, every
// resource type, data source and identity attribute, nested ones included.
func TestDocsAreCurrent(t *testing.T) {
	bin := tofuBinary(t)
	root := repoRoot(t)
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts", "docs.sh"), out)
	cmd.Env = append(os.Environ(), "TOFU_FOR_DOCS="+bin)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/docs.sh: %v\n%s", err, b)
	}
	want, got := pages(t, filepath.Join(out, "docs")), pages(t, filepath.Join(root, "docs"))
	if len(want) < 1+12+12 {
		t.Errorf("rendered %d pages, want the index, 12 resources and 12 data sources", len(want))
	}
	for rel, b := range want {
		if g, ok := got[rel]; !ok {
			t.Errorf("docs/%s is missing: run make docs", rel)
		} else if !bytes.Equal(g, b) {
			t.Errorf("docs/%s is stale: %s", rel, regenerate(rel))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("docs/%s is no longer generated: %s", rel, regenerate(rel))
		}
	}

	data, err := os.ReadFile(filepath.Join(out, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps tfjson.ProviderSchemas
	if err := ps.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	p := ps.Schemas["takoform"]
	if p == nil {
		t.Fatal("the schema document holds no takoform provider")
	}
	var empty []string
	count := 0
	var walk func(where string, attrs map[string]*tfjson.SchemaAttribute)
	walk = func(where string, attrs map[string]*tfjson.SchemaAttribute) {
		for name, a := range attrs {
			count++
			if a.Description == "" {
				empty = append(empty, where+"."+name)
			}
			if a.AttributeNestedType != nil {
				walk(where+"."+name, a.AttributeNestedType.Attributes)
			}
		}
	}
	block := func(where string, s *tfjson.Schema) {
		if s.Block.Description == "" {
			empty = append(empty, where)
		}
		walk(where, s.Block.Attributes)
	}
	block("provider", p.ConfigSchema)
	for n, s := range p.ResourceSchemas {
		block(n, s)
	}
	for n, s := range p.DataSourceSchemas {
		block("data."+n, s)
	}
	for n, s := range p.ResourceIdentitySchemas {
		for an, a := range s.Attributes {
			count++
			if a.Description == "" {
				empty = append(empty, n+".identity."+an)
			}
		}
	}
	sort.Strings(empty)
	for _, e := range empty {
		t.Errorf("%s has no description", e)
	}
	t.Logf("%d attributes, %d without a description", count, len(empty))
}

// regenerate is the repair for a page of docs/ that differs from what
// `make docs` renders. A guide is written in templates/guides/ and copied
// by tfplugindocs into docs/guides/, which `make docs` empties first: an
// edit made in docs/guides/ would be lost, so it is moved to the source.
func regenerate(rel string) string {
	if name, ok := strings.CutPrefix(rel, "guides/"); ok {
		return "guides are written in templates/guides/ (make docs rewrites docs/guides/): move your edit to templates/guides/" + name + ", then run make docs"
	}
	return "run make docs"
}

// pages reads every file under dir, keyed by slash path.
func pages(t *testing.T, dir string) map[string][]byte {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// TestDescriptionsComeFromTheForms: every desired member of every Edge
// type is described by its Form schema's own description (none falls back
// to the placeholder), in both Description and MarkdownDescription, and a
// type's description opens with its Form's title.
func TestDescriptionsComeFromTheForms(t *testing.T) {
	reg := edgeRegistry(t)
	for name, typ := range reg.Types {
		if title := typ.Create.Def.Title(); !strings.Contains(typ.Schema.MarkdownDescription, title) || typ.Schema.Description == "" {
			t.Errorf("%s: description %q does not carry the Form's title %q", name, typ.Schema.MarkdownDescription, title)
		}
		for _, f := range typ.Create.Fields {
			a := typ.Schema.Attributes[f.Attr]
			if f.Doc == "" || a.GetMarkdownDescription() != f.Doc || a.GetDescription() == "" {
				t.Errorf("%s.%s: markdown %q, plain %q; the Form says %q", name, f.Attr, a.GetMarkdownDescription(), a.GetDescription(), f.Doc)
			}
		}
	}
}

// TestStaleGuideNamesItsSource: a guide differing from what make docs
// renders is mended in templates/guides/, since make docs empties
// docs/guides/; any other page is mended by make docs alone.
func TestStaleGuideNamesItsSource(t *testing.T) {
	if got := regenerate("guides/recovery.md"); !strings.Contains(got, "templates/guides/recovery.md") {
		t.Errorf("a stale guide's repair %q does not name templates/guides/recovery.md", got)
	}
	if got := regenerate("resources/worker_bundle.md"); got != "run make docs" {
		t.Errorf("a stale resource page's repair = %q, want run make docs", got)
	}
}
