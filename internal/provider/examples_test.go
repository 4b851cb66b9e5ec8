package provider_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/provider"
)

// TestImportExamplesAreCurrent: the committed import examples are what
// `go generate ./internal/provider` (make docs) writes for this build.
func TestImportExamplesAreCurrent(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples")
	files, err := provider.ImportExamples(edgeRegistry(t), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*15 {
		t.Errorf("%d import example files, want two for each of the 15 types", len(files))
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || string(got) != string(want) {
			t.Errorf("examples/%s is stale or missing (run make docs): %v", rel, err)
		}
	}
}

var (
	importLine  = regexp.MustCompile(`(?m)^tofu import (\S+) '?([^'\n]+)'?$`)
	identityKey = regexp.MustCompile(`(?m)^\s+(space|name)\s+=\s+"([^"]*)"$`)
)

// TestImportExamplesParse: every import ID an example shows is accepted by
// THE import parser (the JSON one naming the type's default create
// FormRef), and every identity example by the identity rule.
func TestImportExamplesParse(t *testing.T) {
	reg := edgeRegistry(t)
	dir := filepath.Join(repoRoot(t), "examples")
	for name, typ := range reg.Types {
		sh, err := os.ReadFile(filepath.Join(dir, "resources", name, "import.sh"))
		if err != nil {
			t.Fatal(err)
		}
		lines := importLine.FindAllStringSubmatch(string(sh), -1)
		if len(lines) != 3 {
			t.Errorf("%s: import.sh shows %d import commands, want NAME, SPACE/NAME and JSON", name, len(lines))
		}
		for _, m := range lines {
			if m[1] != name+".example" {
				t.Errorf("%s: import.sh imports into %s", name, m[1])
			}
			id, err := provider.ParseImportID(m[2])
			if err != nil {
				t.Errorf("%s: import ID %s: %v", name, m[2], err)
				continue
			}
			if strings.HasPrefix(m[2], "{") && (id.Ref == nil || *id.Ref != typ.DefaultCreate) {
				t.Errorf("%s: JSON import ID names %v, want %s", name, id.Ref, typ.DefaultCreate)
			}
		}
		tf, err := os.ReadFile(filepath.Join(dir, "resources", name, "import-by-identity.tf"))
		if err != nil {
			t.Fatal(err)
		}
		members := map[string]any{}
		for _, m := range identityKey.FindAllStringSubmatch(string(tf), -1) {
			members[m[1]] = m[2]
		}
		if _, err := provider.ImportIDFromIdentity(members); err != nil || len(members) != 2 || !strings.Contains(string(tf), "to = "+name+".example") {
			t.Errorf("%s: identity example %v: %v", name, members, err)
		}
	}
}
