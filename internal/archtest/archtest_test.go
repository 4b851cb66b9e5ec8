package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryFollowsArchitecture holds the module to ARCHITECTURE.md
// §3.1: the real import graph (go list -deps -json ./...) breaks no rule,
// every rule governs a package or is planned, every exception is used.
func TestRepositoryFollowsArchitecture(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := Parse(page)
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}
	if len(rules.Rules) < 10 {
		t.Fatalf("ARCHITECTURE.md states %d rules; the deps block was not read whole", len(rules.Rules))
	}
	g, outside, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"ijson", "form", "wire", "host", "host/store", "internal/provider", "cmd/takoform"} {
		if _, ok := g[p]; !ok {
			t.Fatalf("the derived graph lacks %s: %v", p, g)
		}
	}
	if !contains(g["host"], "host/store") || !contains(g["form"], "ijson") {
		t.Fatalf("the derived graph lacks known imports: host → %v, form → %v", g["host"], g["form"])
	}
	if !contains(outside["internal/provider"], "github.com/hashicorp/terraform-plugin-go/tfprotov6") || contains(outside["internal/provider"], "ijson") {
		t.Fatalf("the imports from outside the module are not the provider's: %v", outside["internal/provider"])
	}
	for _, f := range Check(rules, g, outside) {
		t.Error(f)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

const synthetic = "# A page\n\n```deps\n" +
	"D1: low may import only nothing\n" +
	"D2: mid/... may import only low, mid/...\n" +
	"D3: top may be imported only by cmd/...\n" +
	"D4: future/... may import only low (planned)\n" +
	"D5: gone may import only low\n" +
	"D6: lowtoo may import only low (planned)\n" +
	"D7: mid/... never imports example.com/lib/bad, top\n" +
	"exception: mid/store imports wire\n" +
	"exception: mid imports low\n" +
	"```\n\nProse after the block: D9: not a rule.\n"

// TestCheckReportsViolations shows the check can fail: on a synthetic graph
// each kind of finding is reported, naming the import and the rule (a
// never-imports rule over imports of the module and from outside it), and
// what the rules allow (including a recorded exception and a planned rule)
// is not.
func TestCheckReportsViolations(t *testing.T) {
	rules, err := Parse([]byte(synthetic))
	if err != nil {
		t.Fatal(err)
	}
	g := Graph{
		"low":       {},
		"wire":      {"low"},
		"mid":       {"low", "mid/store"},
		"mid/store": {"wire", "low"}, // excused by the exception
		"mid/x":     {"top"},         // breaks D2 and D3
		"top":       {"mid", "low"},
		"cmd/a":     {"top"},
		"lowtoo":    {"low"},
	}
	outside := Outside{
		"mid/store": {"fmt", "example.com/lib/good"},
		"mid/y":     {"example.com/lib/bad"}, // breaks D7
		"top":       {"example.com/lib/bad"}, // no rule of top's forbids it
	}
	g["mid/y"] = []string{}
	var got []string
	for _, f := range Check(rules, g, outside) {
		got = append(got, f.String())
	}
	want := []string{
		"mid/x imports top — breaks ARCHITECTURE.md §3.1 `D2: mid/... may import only low, mid/...`",
		"mid/x imports top — breaks ARCHITECTURE.md §3.1 `D3: top may be imported only by cmd/...`",
		"mid/x imports top — breaks ARCHITECTURE.md §3.1 `D7: mid/... never imports example.com/lib/bad, top`",
		"mid/y imports example.com/lib/bad — breaks ARCHITECTURE.md §3.1 `D7: mid/... never imports example.com/lib/bad, top`",
		"no package matches the rule's subject: correct the path, or mark the rule (planned) — breaks ARCHITECTURE.md §3.1 `D5: gone may import only low`",
		"the recorded exception is not needed (no rule forbids it, or mid no longer imports low): remove it from ARCHITECTURE.md §3.1 and §3.2 — breaks ARCHITECTURE.md §3.1 `exception: mid imports low`",
		"the rule is marked (planned) but its code exists: drop the mark, and the word planned from the section that describes the code — breaks ARCHITECTURE.md §3.1 `D6: lowtoo may import only low (planned)`",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The lowest package importing anything breaks D1.
	g["low"] = []string{"wire"}
	found := false
	for _, f := range Check(rules, g, outside) {
		if f.Problem == "low imports wire" && strings.HasPrefix(f.Rule, "D1:") {
			found = true
		}
	}
	if !found {
		t.Fatalf("low → wire was not reported under D1: %v", Check(rules, g, outside))
	}
}

// TestParseRefusesMalformedBlocks: a page without the block, a line of
// another shape, a repeated ID or a pattern that is no path is an error
// naming the line, never an empty rule set that passes everything.
func TestParseRefusesMalformedBlocks(t *testing.T) {
	for name, page := range map[string]string{
		"no block":      "# page\n\nD1: a may import only b\n",
		"bad line":      "```deps\nD1: a must not import b\n```\n",
		"repeated id":   "```deps\nD1: a may import only b\nD1: c may import only b\n```\n",
		"bad pattern":   "```deps\nD1: a may import only B Thing\n```\n",
		"nothing used":  "```deps\nD1: a may be imported only by nothing\n```\n",
		"never nothing": "```deps\nD1: a never imports nothing\n```\n",
	} {
		if _, err := Parse([]byte(page)); err == nil {
			t.Errorf("%s: Parse accepted %q", name, page)
		}
	}
}

// TestMatch pins the pattern language of ARCHITECTURE.md §3.1.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, p string
		want   bool
	}{
		{"host", "host", true},
		{"host", "host/store", false},
		{"host/...", "host", true},
		{"host/...", "host/store/sqlite", true},
		{"host/...", "hostile", false},
		{"host/store/...", "host/storecopy", false},
	} {
		if got := Match(c.pat, c.p); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.p, got, c.want)
		}
	}
}
