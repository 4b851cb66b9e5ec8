package citations

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryCitationsResolve holds the whole repository: every comment
// citing spec/… names a file and section that exist in a clone.
func TestRepositoryCitationsResolve(t *testing.T) {
	findings, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// TestCheckFindsBrokenCitations shows the check can fail: a tree with a
// missing section, a missing file, a bare section and an old "brief"
// citation yields one finding each, and a good citation none.
func TestCheckFindsBrokenCitations(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("spec/api.md", "# API\n\n## 3. Endpoints\n\n### 3.4 Semantics\n\n## Appendix A — checks\n")
	write("spec/decisions/0001-x.md", "# 0001\n")
	write("a.go", `package a

// Good cites spec/api.md §3.4, §3 and Appendix A, and spec/decisions/0001-x.md,
// and RFC 9110 §10.2.3.
func Good() {}

// Missing cites spec/api.md §3.5 (no such heading).
func Missing() {}

// Gone cites spec/none.md §1.
func Gone() {}

// Bare cites §3.4 with no file.
func Bare() {}

// Old cites the brief §3.4.
func Old() {}

// Split cites spec/api.md
// §3.9 across a line break.
func Split() {}
`)
	findings, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{`spec/api.md §3.5`, `spec/none.md`, `"§3.4": a section with no document`, `"brief §"`, `spec/api.md §3.9`}
	if len(findings) != len(want) {
		t.Fatalf("findings = %d, want %d:\n%s", len(findings), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("finding %d = %s, want it to mention %s", i, got[i], w)
		}
	}
}

// TestSpecIndexListsEveryDecision: the decision records' index in
// spec/README.md (linked from the README's "Where to go next") names every
// file in spec/decisions/, so a new decision is found from the front page.
func TestSpecIndexListsEveryDecision(t *testing.T) {
	root := filepath.Join("..", "..")
	index, err := os.ReadFile(filepath.Join(root, "spec", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "spec", "decisions", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no decision records found in spec/decisions")
	}
	for _, f := range files {
		link := "(decisions/" + filepath.Base(f) + ")"
		if !strings.Contains(string(index), link) {
			t.Errorf("spec/README.md does not list %s: add `- [NNNN]%s Title` to its decision records", filepath.Base(f), link)
		}
	}
}
