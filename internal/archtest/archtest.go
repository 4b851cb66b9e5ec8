// Package archtest holds the module's import graph to the dependency rules
// of ARCHITECTURE.md §3.1. The rules live in one place, the fenced `deps`
// block of that page; Parse reads them, Load derives the real graph with
// `go list -deps -json ./...` (module packages and their non-test imports:
// of the module, and, for the rules that name one, outside it),
// and Check names every import that breaks a rule, every rule that governs
// no package (unless marked planned) and every recorded exception that no
// import uses (ARCHITECTURE.md §3.2), so the page cannot drift from the code.
package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Kind is what a rule constrains.
type Kind int

const (
	// ImportOnly: every module import of a subject is one of Targets.
	ImportOnly Kind = iota
	// ImportedOnlyBy: every importer of a subject is a subject or one of Targets.
	ImportedOnlyBy
	// NeverImports: no subject imports a package matching one of Targets,
	// of the module or outside it (a full import path, such as a
	// library's package).
	NeverImports
)

// Rule is one line of the deps block: ID ("D9"), the patterns it governs,
// the patterns it allows, whether the code it governs is still planned, and
// Text, the line as the page states it (quoted in every finding).
type Rule struct {
	ID       string
	Kind     Kind
	Subjects []string
	Targets  []string // empty with ImportOnly: no module import at all
	Planned  bool
	Text     string
}

// Exception is one recorded arrow against the rules: From imports To.
type Exception struct {
	From, To string
	Text     string
}

// Rules is the whole deps block.
type Rules struct {
	Rules      []Rule
	Exceptions []Exception
}

// Graph maps each module package (path relative to the module, "" for the
// module root) to the module packages its non-test files import.
type Graph map[string][]string

// Outside maps each module package (as Graph) to the packages outside the
// module its non-test files import, by full import path (the standard
// library's and the dependencies').
type Outside map[string][]string

var (
	ruleLine = regexp.MustCompile(`^(D[0-9]+): (.+?) (may import only|may be imported only by|never imports) (.+?)( \(planned\))?$`)
	excLine  = regexp.MustCompile(`^exception: (\S+) imports (\S+)$`)
	pattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*(/\.\.\.)?$`)
)

// Parse reads the first fenced block tagged `deps` of the Markdown page
// md. Each line is a rule or an exception (ARCHITECTURE.md §3.1); a line of
// another shape, a pattern that is no package path, a repeated rule ID or a
// page without the block is an error naming the line.
func Parse(md []byte) (Rules, error) {
	var r Rules
	in, found := false, false
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(md))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = line == "```deps"
			found = found || in
			continue
		}
		if line == "```" {
			break
		}
		if line == "" {
			continue
		}
		if m := excLine.FindStringSubmatch(line); m != nil {
			if !pattern.MatchString(m[1]) || !pattern.MatchString(m[2]) {
				return Rules{}, fmt.Errorf("line %d: %q: an exception names two package paths", n, line)
			}
			r.Exceptions = append(r.Exceptions, Exception{From: m[1], To: m[2], Text: line})
			continue
		}
		m := ruleLine.FindStringSubmatch(line)
		if m == nil {
			return Rules{}, fmt.Errorf("line %d: %q is neither `DN: X may import only A, B`, `DN: X may be imported only by A, B`, `DN: X never imports A, B` nor `exception: X imports Y`", n, line)
		}
		if seen[m[1]] {
			return Rules{}, fmt.Errorf("line %d: rule %s is stated twice", n, m[1])
		}
		seen[m[1]] = true
		rule := Rule{ID: m[1], Planned: m[5] != "", Text: line}
		switch m[3] {
		case "may be imported only by":
			rule.Kind = ImportedOnlyBy
		case "never imports":
			rule.Kind = NeverImports
		}
		var err error
		if rule.Subjects, err = list(m[2], false); err != nil {
			return Rules{}, fmt.Errorf("line %d: %w", n, err)
		}
		if rule.Targets, err = list(m[4], rule.Kind == ImportOnly); err != nil {
			return Rules{}, fmt.Errorf("line %d: %w", n, err)
		}
		r.Rules = append(r.Rules, rule)
	}
	if err := sc.Err(); err != nil {
		return Rules{}, err
	}
	if !found {
		return Rules{}, errors.New("no ```deps block: the rules of ARCHITECTURE.md §3.1 are missing")
	}
	return r, nil
}

// list splits "a, b/..." into patterns; "nothing" is the empty list where
// allowed.
func list(s string, nothingOK bool) ([]string, error) {
	if s == "nothing" {
		if !nothingOK {
			return nil, errors.New(`"nothing" only follows "may import only"`)
		}
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ", ") {
		if !pattern.MatchString(p) {
			return nil, fmt.Errorf("%q is not a package path (a path relative to the module, or PATH/...)", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// Match reports whether package path p matches pattern pat: the same path,
// or, for "X/...", X or any path below it.
func Match(pat, p string) bool {
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pat
}

func matchAny(pats []string, p string) bool {
	for _, pat := range pats {
		if Match(pat, p) {
			return true
		}
	}
	return false
}

// Finding is one way the graph and the page disagree.
type Finding struct {
	Rule    string // the rule's or exception's text as the page states it
	Problem string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s — breaks ARCHITECTURE.md §3.1 `%s`", f.Problem, f.Rule)
}

// Check returns every finding, sorted: an import a rule forbids (unless it
// is a recorded exception), a rule that governs no package of g and is not
// planned, a planned rule that governs a package, and an exception no
// import of g uses. outside holds the imports from outside the module,
// which only a NeverImports rule reads.
func Check(r Rules, g Graph, outside Outside) []Finding {
	var out []Finding
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	excused := map[[2]string]bool{}
	for _, e := range r.Exceptions {
		excused[[2]string{e.From, e.To}] = true
	}
	used := map[[2]string]bool{}
	for _, rule := range r.Rules {
		governs := false
		for _, p := range pkgs {
			if matchAny(rule.Subjects, p) {
				governs = true
			}
			imports := g[p]
			if rule.Kind == NeverImports {
				imports = append(append([]string(nil), g[p]...), outside[p]...)
			}
			for _, imp := range imports {
				var broken bool
				switch rule.Kind {
				case ImportOnly:
					broken = matchAny(rule.Subjects, p) && !matchAny(rule.Targets, imp)
				case ImportedOnlyBy:
					broken = matchAny(rule.Subjects, imp) && !matchAny(rule.Subjects, p) && !matchAny(rule.Targets, p)
				case NeverImports:
					broken = matchAny(rule.Subjects, p) && matchAny(rule.Targets, imp)
				}
				if !broken {
					continue
				}
				if k := [2]string{p, imp}; excused[k] {
					used[k] = true
					continue
				}
				out = append(out, Finding{Rule: rule.Text, Problem: fmt.Sprintf("%s imports %s", show(p), show(imp))})
			}
		}
		switch {
		case !governs && !rule.Planned:
			out = append(out, Finding{Rule: rule.Text, Problem: "no package matches the rule's subject: correct the path, or mark the rule (planned)"})
		case governs && rule.Planned:
			out = append(out, Finding{Rule: rule.Text, Problem: "the rule is marked (planned) but its code exists: drop the mark, and the word planned from the section that describes the code"})
		}
	}
	for _, e := range r.Exceptions {
		if !used[[2]string{e.From, e.To}] {
			out = append(out, Finding{Rule: e.Text, Problem: fmt.Sprintf("the recorded exception is not needed (no rule forbids it, or %s no longer imports %s): remove it from ARCHITECTURE.md §3.1 and §3.2", e.From, e.To)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Problem != out[j].Problem {
			return out[i].Problem < out[j].Problem
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

func show(p string) string {
	if p == "" {
		return "the module root package"
	}
	return p
}

// Load derives the module's graph in dir by running
// `go list -deps -json ./...`: the packages of the main module and, for
// each, the module packages its non-test Go files import (Graph) and the
// packages outside the module they import (Outside). Errors are the go
// command's (with its standard error) or a package that did not load.
func Load(dir string) (Graph, Outside, error) {
	cmd := exec.Command(goTool(), "list", "-deps", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list -deps -json ./...: %w: %s", err, stderr.String())
	}
	return decode(out)
}

// goTool is the go command of the toolchain that runs the test ($GOROOT/bin/go
// when GOROOT is set and holds one), else the one on PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

type listed struct {
	ImportPath string
	Imports    []string
	Module     *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

func decode(out []byte) (Graph, Outside, error) {
	var pkgs []listed
	mod := ""
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("decode go list output: %w", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		if p.Error != nil {
			return nil, nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		mod = p.Module.Path
		pkgs = append(pkgs, p)
	}
	if mod == "" {
		return nil, nil, errors.New("go list named no package of the main module")
	}
	rel := func(p string) (string, bool) {
		if p == mod {
			return "", true
		}
		r, ok := strings.CutPrefix(p, mod+"/")
		return r, ok
	}
	g, outside := Graph{}, Outside{}
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		g[from] = []string{}
		for _, imp := range p.Imports {
			if to, ok := rel(imp); ok {
				g[from] = append(g[from], to)
			} else {
				outside[from] = append(outside[from], imp)
			}
		}
	}
	return g, outside, nil
}
