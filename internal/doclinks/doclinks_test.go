package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryLinksResolve holds the repository: every relative link of
// every hand-written Markdown page resolves in a clone.
func TestRepositoryLinksResolve(t *testing.T) {
	findings, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// TestCheckFindsBrokenLinks shows the check can fail: in a small tree, a
// missing file, a missing heading, a link out of the tree and an absolute
// path are found, while links into existing files, directories, headings
// (code spans, punctuation and repeats included), <a id> anchors, URLs,
// code blocks and the skipped generated pages are not.
func TestCheckFindsBrokenLinks(t *testing.T) {
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
	write("guide/page.md", "# Page\n\n## `host serve`, and its flags\n\n## Notes\n\n## Notes\n\n<a id=\"custom\"></a>\n\n```sh\n## not a heading\n```\n")
	write("LICENSE", "text\n")
	write("docs/resources/x.md", "[generated](nowhere.md)\n")
	write("README.md", strings.Join([]string{
		"[ok](guide/page.md) [dir](guide/) [lic](LICENSE) [web](https://example.com/x.md)",
		"[h](guide/page.md#host-serve-and-its-flags) [rep](guide/page.md#notes-1) [id](guide/page.md#custom)",
		"[self](#readme-heading) `[code](missing-in-code.md)`",
		"```",
		"[fenced](missing-in-fence.md)",
		"```",
		"# README heading",
		"[gone](missing.md)",
		"[nohead](guide/page.md#not-a-heading)",
		"[out](../outside.md)",
		"[abs](/guide/page.md)",
		"[ref]: guide/gone.md",
	}, "\n"))
	findings, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{`README.md:8: link "missing.md"`, `README.md:9: link "guide/page.md#not-a-heading"`,
		`README.md:10: link "../outside.md"`, `README.md:11: link "/guide/page.md"`, `README.md:12: link "guide/gone.md"`}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("finding %d = %s, want it to start with %s", i, got[i], w)
		}
	}
}
