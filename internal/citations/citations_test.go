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
	write("spec/api.md", "# API\n\n## 3. Endpoints\n\n### 3.4 Semantics\n\n| # | Topic |\n| --- | --- |\n| 3.7 | a numbered row |\n\n## Appendix A — checks\n")
	write("spec/decisions/0001-x.md", "# 0001\n")
	write("a.go", `package a

// Good cites spec/api.md §3.4, §3, §3.7 (a numbered table row) and Appendix A, and spec/decisions/0001-x.md,
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

// TestCheckFindsRecordAndTrackerCitations shows each finding kind of the
// record and tracker checks on a synthetic tree, in Go comments and in
// Markdown anywhere in the tree (a guide under docs/, a handbook page, the
// root pages): a repo decision that does not exist, a retired one (naming
// where its content went, in prose and by path), a tracker issue number,
// a citation of the design notes outside the repository, and an
// ARCHITECTURE.md section it does not have. Good citations (an existing
// record in a list, a bare public decision, an ARCHITECTURE.md section)
// yield none.
func TestCheckFindsRecordAndTrackerCitations(t *testing.T) {
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
	write("ARCHITECTURE.md", "# Arch\n\n## 1. Parts\n\n## 2. Rules\n\nSee §1 and repo decision 0001.\n")
	write("spec/decisions/0001-x.md", "# 0001 — x\n")
	write("spec/decisions/0003-y.md", "# 0003 — y\n")
	write("spec/decisions/README.md", "# Records\n\n## Records\n\n| 0002 | not retired: another table |\n\n## Retired numbers\n\n| Number | Where |\n| --- | --- |\n| 0002 | PERFORMANCE.md, log entry \"Two …\" |\n")
	write("PERFORMANCE.md", "# Log\n\n## Log\n\n### 2026-12-01 — Two things measured\n")
	write("a.go", `package a

// Good cites repo decisions 0001 and 0003, repo decision
// 0001 across a line, the public decision 0030, ARCHITECTURE.md §2 and
// spec/decisions/0003-y.md.
func Good() {}

// Missing cites repo decision 0009.
func Missing() {}

// Retired cites Repo decision 0002 and spec/decisions/0002-two.md.
func Retired() {}

// Tracker cites issue 14 and (issues #7 and 8).
func Tracker() {}

// Outside cites ../shared/DESIGN.md and ARCHITECTURE.md §9.
func Outside() {}

// Measured cites PERFORMANCE.md, log entry "Two things
// measured", and PERFORMANCE.md, log entry "Three".
func Measured() {}
`)
	write("docs/guides/g.md", "# Guide\n\nFixed in issue 12.\n")
	write("handbook/h.md", "# Handbook\n\nWhy: repo decision 0001, repo decision 0004.\n\nRules: [`ARCHITECTURE.md`](ARCHITECTURE.md) §2, §7.\n")
	write("CHANGELOG.md", "# Changelog\n\n- a fix, see DESIGN.md.\n")
	findings, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{
		`CHANGELOG.md:3: "DESIGN.md": not in this repository`,
		`a.go:8: "repo decision 0009": there is no repo decision 0009`,
		`a.go:11: "repo decision 0002": repo decision 0002 is retired; its content went to PERFORMANCE.md, log entry "Two …"`,
		`a.go:11: "spec/decisions/0002-two.md": repo decision 0002 is retired`,
		`a.go:14: "issue 14": a tracker issue number`,
		`a.go:14: "issues #7": a tracker issue number`,
		`a.go:17: "../shared/DESIGN.md": not in this repository`,
		`a.go:17: "ARCHITECTURE.md §9": ARCHITECTURE.md has no section 9`,
		`a.go:21: "PERFORMANCE.md log entry Three": PERFORMANCE.md has no log entry`,
		`docs/guides/g.md:3: "issue 12": a tracker issue number`,
		`handbook/h.md:3: "repo decision 0004": there is no repo decision 0004`,
		`handbook/h.md:5: "ARCHITECTURE.md §7": ARCHITECTURE.md has no section 7`,
	}
	if len(got) != len(want) {
		t.Fatalf("findings = %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("finding %d = %s\nwant it to contain %s", i, got[i], w)
		}
	}
}

// TestDecisionIndexListsEveryRecord: spec/decisions/README.md lists every
// record in spec/decisions/, and no retired number is also a record, so a
// new decision is found from the index and a retired number stays retired.
func TestDecisionIndexListsEveryRecord(t *testing.T) {
	root := filepath.Join("..", "..")
	index, err := os.ReadFile(filepath.Join(root, "spec", "decisions", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := loadRecords(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.exist) == 0 || len(recs.retired) == 0 {
		t.Fatalf("records %d, retired %d: spec/decisions or its README's retired table was not read", len(recs.exist), len(recs.retired))
	}
	for n, file := range recs.exist {
		if !strings.Contains(string(index), "("+file+")") {
			t.Errorf("spec/decisions/README.md does not list %s: add `- [%s](%s) Title` to its records", file, n, file)
		}
		if where, ok := recs.retired[n]; ok {
			t.Errorf("%s is a record, but its number is retired (content went to %s): a retired number is never reused", file, where)
		}
	}
}
