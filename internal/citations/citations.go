// Package citations checks that every citation of this repository's own
// documents resolves in a clone, in Go comments and in every Markdown file
// of the tree: a spec page or ARCHITECTURE.md and a section
// ("spec/host-api-v1alpha3.md §3.5", "… Appendix A", "ARCHITECTURE.md §5")
// must name a file that exists and a heading that file has, every path
// under spec/ must exist, and a section sign needs a page before it. A
// "repo decision NNNN" must name a record in spec/decisions/, and one that
// names a retired number fails saying where its content went
// (spec/decisions/README.md); a cited entry of the performance log must be
// one PERFORMANCE.md has; a number of the issue tracker and a document
// outside the repository (the design notes, the shared spec pages) are
// refused (ARCHITECTURE.md §6). The pages' headings are stable
// (spec/host-api-v1alpha3.md, its opening paragraph; ARCHITECTURE.md, its
// opening).
package citations

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Finding is one citation that does not resolve: File:Line names the
// comment, Citation the text cited, Problem what is wrong and how to fix it.
type Finding struct {
	File     string
	Line     int
	Citation string
	Problem  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %q: %s", f.File, f.Line, f.Citation, f.Problem)
}

var (
	// specPath is a repository path under spec/, or ARCHITECTURE.md, not
	// preceded by a path character (so JSON pointers like /spec/a are not
	// paths).
	specPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(spec/[A-Za-z0-9_./-]*[A-Za-z0-9_-]|ARCHITECTURE\.md)`)
	// sectionRun is the run of section references that follows a cited
	// .md file (after the end of a Markdown link, "`](…)"): one section
	// sign and number, several joined by commas or "and", or "Appendix A".
	sectionRun = regexp.MustCompile("^[`)]*" + `(?:[ \t\n]*(?:,|and|;)?[ \t\n]*(?:§[0-9]+(?:\.[0-9]+)*|Appendix [A-Z]\b))+`)
	sectionRef = regexp.MustCompile(`§([0-9]+(?:\.[0-9]+)*)|Appendix ([A-Z])\b`)
	// bareSection is a § reference with no file before it in its comment.
	bareSection = regexp.MustCompile(`§[0-9]`)
	// rfcBefore ends a text cited as "RFC 9110 §10.2.3": an RFC's section.
	rfcBefore = regexp.MustCompile(`RFC [0-9]+[ \t\n]*$`)
	// numberedRow is a table row whose first cell is a section number
	// ("| 10.3 | Topic | …"): a page may number its rows as sections
	// (spec/runtime-v1.md §10).
	numberedRow = regexp.MustCompile(`(?m)^\|[ \t]*([0-9]+\.[0-9]+(?:\.[0-9]+)*)[ \t]*\|`)
	heading     = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(?:([0-9]+(?:\.[0-9]+)*)\.?[ \t]|Appendix ([A-Z])\b)`)
)

// Check walks the Go files and Markdown documents under root (skipping
// hidden folders, testdata, tools and bin) and returns every citation that
// does not resolve, sorted by file and line. Errors are I/O or parse errors
// of the files read.
func Check(root string) ([]Finding, error) {
	recs, err := loadRecords(root)
	if err != nil {
		return nil, err
	}
	c := checker{root: root, headings: map[string]map[string]bool{}, records: recs}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "tools" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(name, ".go"):
			return c.goFile(path, rel)
		case strings.HasSuffix(name, ".md"):
			return c.mdFile(path, rel)
		}
		return nil
	})
	sort.Slice(c.findings, func(i, j int) bool {
		if c.findings[i].File != c.findings[j].File {
			return c.findings[i].File < c.findings[j].File
		}
		return c.findings[i].Line < c.findings[j].Line
	})
	return c.findings, err
}

type checker struct {
	root     string
	headings map[string]map[string]bool // spec file → section keys ("3.4", "Appendix A")
	records  records
	findings []Finding
}

func (c *checker) goFile(path, rel string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("parse %s: %w", rel, err)
	}
	for _, g := range f.Comments {
		c.text(rel, fset.Position(g.Pos()).Line, g.Text(), true, true)
	}
	return nil
}

func (c *checker) mdFile(path, rel string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// A spec page's bare section references are to itself; other
	// documents must name the file they cite.
	self := strings.HasPrefix(rel, "spec/") || rel == "ARCHITECTURE.md"
	line := 1
	for _, para := range strings.Split(string(b), "\n\n") {
		c.text(rel, line, para, !self, !restated[rel])
		line += strings.Count(para, "\n") + 2
	}
	return nil
}

// restated are the pages that restate the public specification: the paths
// under spec/ they name are the public repository's, not this one's.
var restated = map[string]bool{"spec/host-api-v1alpha3.md": true, "spec/conformance-probe.md": true}

// text checks one comment or paragraph starting at line. needFile: a bare
// section sign is a finding; ownPaths: paths under spec/ name this
// repository's files.
func (c *checker) text(rel string, line int, s string, needFile, ownPaths bool) {
	c.recordText(rel, line, s)
	covered := make([]bool, len(s))
	for _, m := range specPath.FindAllStringSubmatchIndex(s, -1) {
		p := s[m[2]:m[3]]
		at := line + strings.Count(s[:m[2]], "\n")
		if !ownPaths {
			continue
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p))); err != nil {
			if d := decisionPath.FindStringSubmatch(p); d != nil {
				if problem := c.records.problem(d[1]); problem != "" {
					c.add(rel, at, p, problem)
					continue
				}
			}
			c.add(rel, at, p, "no such file in this repository: cite a file under spec/ that exists")
			continue
		}
		if !strings.HasSuffix(p, ".md") {
			continue
		}
		run := sectionRun.FindString(s[m[3]:])
		for i := m[3]; i < m[3]+len(run); i++ {
			covered[i] = true
		}
		for _, r := range sectionRef.FindAllStringSubmatch(run, -1) {
			key := r[1]
			if key == "" {
				key = "Appendix " + r[2]
			}
			if !c.has(p, key) {
				c.add(rel, at, p+" "+r[0], fmt.Sprintf("%s has no section %s: cite a heading it has (or a table row numbered so)", p, key))
			}
		}
	}
	if !needFile {
		return
	}
	for _, m := range bareSection.FindAllStringIndex(s, -1) {
		if !covered[m[0]] && !strings.Contains(s[:m[0]], "spec/") && !strings.Contains(s[:m[0]], "ARCHITECTURE.md") && !strings.HasSuffix(s[:m[0]], "brief ") && !rfcBefore.MatchString(s[:m[0]]) {
			end := m[1]
			for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
				end++
			}
			end -= len(s[m[0]:end]) - len(strings.TrimRight(s[m[0]:end], "."))
			c.add(rel, line+strings.Count(s[:m[0]], "\n"), s[m[0]:end], "a section with no document: name it (spec/host-api-v1alpha3.md §N)")
		}
	}
	if i := strings.Index(s, "brief §"); i >= 0 {
		c.add(rel, line+strings.Count(s[:i], "\n"), "brief §", `"the brief" is not in this repository: cite spec/host-api-v1alpha3.md`)
	}
}

func (c *checker) has(file, key string) bool {
	h, ok := c.headings[file]
	if !ok {
		h = map[string]bool{}
		b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
		if err == nil {
			for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
				if m[1] != "" {
					h[m[1]] = true
				} else {
					h["Appendix "+m[2]] = true
				}
			}
			for _, m := range numberedRow.FindAllStringSubmatch(string(b), -1) {
				h[m[1]] = true
			}
		}
		c.headings[file] = h
	}
	return h[key]
}

func (c *checker) add(file string, line int, cite, problem string) {
	c.findings = append(c.findings, Finding{File: file, Line: line, Citation: cite, Problem: problem})
}
