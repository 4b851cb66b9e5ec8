// Package doclinks checks the repository's hand-written Markdown: every
// relative link names a file or directory that exists in a clone, and every
// `#anchor` names a heading (or an `<a id>`) of the page it points into, as
// GitHub derives heading anchors. The provider reference that `make docs`
// generates from the schema (docs/resources, docs/data-sources) is left
// out, and the guides are read where readers find them, docs/guides, not
// in their source templates/guides (whose links are written for
// docs/guides): internal/provider's TestDocsAreCurrent holds docs/ to its
// sources. Where each kind of page lives is CONTRIBUTING.md, "Where
// documentation goes".
package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// skipped are the slash paths, relative to the root, of trees not read:
// generated pages, the guides' sources, and folders a build or a tool fills.
var skipped = map[string]bool{
	"docs/resources":    true,
	"docs/data-sources": true,
	"templates/guides":  true,
	"tools":             true,
	"bin":               true,
	"dist":              true,
	"node_modules":      true,
}

// Finding is one broken link: the page (slash path relative to the root),
// its line, the link's target, and what is wrong.
type Finding struct {
	Page   string
	Line   int
	Target string
	Reason string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: link %q: %s", f.Page, f.Line, f.Target, f.Reason)
}

var (
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?([^\s>]+)>?`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Check reads every *.md under root, except the skipped trees and
// dot-directories, and returns a Finding for each relative link to a file
// or directory that does not exist, or to an anchor its page does not
// define. Links with a scheme (https:, mailto:) are not followed.
func Check(root string) ([]Finding, error) {
	var pages []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || skipped[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") {
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(pages)
	anchors := map[string]map[string]bool{}
	var out []Finding
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(b)) {
			if reason := resolve(root, page, l.target, anchors); reason != "" {
				out = append(out, Finding{Page: page, Line: l.line, Target: l.target, Reason: reason})
			}
		}
	}
	return out, nil
}

type link struct {
	line   int
	target string
}

// links returns the targets of the inline links and link reference
// definitions of a Markdown text, outside fenced code blocks and code spans.
func links(text string) []link {
	var out []link
	fence := ""
	for i, l := range strings.Split(text, "\n") {
		if run, rest, ok := fenceOf(l); ok {
			fence = nextFence(fence, run, rest)
			continue
		}
		if fence != "" {
			continue
		}
		l = codeSpan.ReplaceAllString(l, "")
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refDef.FindStringSubmatch(l); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// fenceOf reports whether a line is a code fence: its run of backticks or
// tildes (three or more, indented at most three spaces) and the rest.
func fenceOf(l string) (run, rest string, ok bool) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return "", "", false
	}
	for _, c := range []string{"`", "~"} {
		rest = strings.TrimLeft(t, c)
		if n := len(t) - len(rest); n >= 3 {
			return t[:n], rest, true
		}
	}
	return "", "", false
}

// nextFence is the open fence after a fence line: it opens one when none
// is open, and closes the open one when it is a run of the same character
// at least as long with nothing after it.
func nextFence(open, run, rest string) string {
	if open == "" {
		return run
	}
	if run[0] == open[0] && len(run) >= len(open) && strings.TrimSpace(rest) == "" {
		return ""
	}
	return open
}

// resolve returns what is wrong with target as a link from page, or "".
func resolve(root, page, target string, anchors map[string]map[string]bool) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	file, frag, _ := strings.Cut(target, "#")
	dest := page
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "an absolute path does not resolve in a clone; write it relative to the page"
		}
		dest = path.Clean(path.Join(path.Dir(page), file))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "points outside the repository"
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
		if err != nil {
			return "no such file or directory: " + dest
		}
		if info.IsDir() || frag == "" {
			return ""
		}
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, ok := anchors[dest]
	if !ok {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dest)))
		if err != nil {
			return "unreadable: " + err.Error()
		}
		a = Anchors(string(b))
		anchors[dest] = a
	}
	if !a[frag] {
		return fmt.Sprintf("%s has no heading whose anchor is #%s", dest, frag)
	}
	return ""
}

// Anchors returns the anchors a Markdown text defines: GitHub's slug of
// each heading outside fenced code (lower case; letters, digits, '-' and
// '_' kept; spaces become '-'; everything else dropped; a repeated slug
// gets -1, -2, …), and the ids of `<a id="…">` and `<a name="…">`.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, l := range strings.Split(text, "\n") {
		if run, rest, ok := fenceOf(l); ok {
			fence = nextFence(fence, run, rest)
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text.
func slug(h string) string {
	h = mdLinkText.ReplaceAllString(h, "$1")
	h = strings.ReplaceAll(h, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
