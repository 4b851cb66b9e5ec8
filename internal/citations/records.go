package citations

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The citations of decision records, tracker issues and documents outside
// the repository (spec/decisions/README.md, "Citing a record";
// ARCHITECTURE.md §6).
var (
	// repoDecision is "repo decision NNNN" or "repo decisions NNNN, NNNN
	// and NNNN" (any case, across a line break).
	repoDecision = regexp.MustCompile(`(?i)\brepo[ \t\n]+decisions?[ \t\n]+([0-9]{4}(?:(?:,[ \t\n]*|[ \t\n]+and[ \t\n]+|,[ \t\n]+and[ \t\n]+)[0-9]{4})*)`)
	fourDigits   = regexp.MustCompile(`[0-9]{4}`)
	// decisionPath is a path of a decision record; its number is group 1.
	decisionPath = regexp.MustCompile(`^spec/decisions/([0-9]{4})-`)
	// trackerIssue is a number of the issue tracker: the word issue (or
	// issues) and a number, with or without "#".
	trackerIssue = regexp.MustCompile(`(?i)\bissues?[ \t\n]+#?[0-9]+`)
	// outside names a document that is not in a clone: the design notes
	// beside the repository, or the shared spec pages (now under spec/).
	outside = regexp.MustCompile(`(?:\.\./)*shared/spec/[A-Za-z0-9_.-]*|(?:(?:\.\./)*shared/)?\bDESIGN\.md\b|\bDESIGN\s+"`)
	// logEntry cites an entry of the performance log by (a part of) its
	// title: the page's name, a comma, the words log entry and the title
	// in double quotes (across line breaks).
	logEntry = regexp.MustCompile(`PERFORMANCE\.md` + "`?" + `,[ \t\n]+log[ \t\n]+entry[ \t\n]+"([^"]+)"`)
	// retiredRow is a row of the retired-numbers table of
	// spec/decisions/README.md: | NNNN | where its content went |.
	retiredRow = regexp.MustCompile(`^\|[ \t]*([0-9]{4})[ \t]*\|[ \t]*(.+?)[ \t]*\|[ \t]*$`)
)

// records is what the citation check knows of spec/decisions/: the numbers
// of the records that exist, and the retired numbers with where their
// content went.
type records struct {
	exist   map[string]string // number → file name
	retired map[string]string // number → where its content went
	entries []string          // the titles of PERFORMANCE.md's log entries
}

// loadRecords reads spec/decisions/ under root: every NNNN-*.md file, and
// the table under "## Retired numbers" of its README.md. A tree without
// the folder has no records (every repo decision citation is then a
// finding); an unreadable README is an error.
func loadRecords(root string) (records, error) {
	r := records{exist: map[string]string{}, retired: map[string]string{}}
	dir := filepath.Join(root, "spec", "decisions")
	files, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil {
		return r, err
	}
	for _, f := range files {
		b := filepath.Base(f)
		r.exist[b[:4]] = b
	}
	perf, err := os.ReadFile(filepath.Join(root, "PERFORMANCE.md"))
	if err != nil && !os.IsNotExist(err) {
		return r, err
	}
	for _, line := range strings.Split(string(perf), "\n") {
		if t, ok := strings.CutPrefix(line, "### "); ok {
			r.entries = append(r.entries, t)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if os.IsNotExist(err) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Retired numbers"
			continue
		}
		if m := retiredRow.FindStringSubmatch(line); in && m != nil {
			r.retired[m[1]] = m[2]
		}
	}
	return r, nil
}

// problem says what is wrong with a citation of record number n, or ""
// when it names a record that exists.
func (r records) problem(n string) string {
	if _, ok := r.exist[n]; ok {
		return ""
	}
	if where, ok := r.retired[n]; ok {
		return fmt.Sprintf("repo decision %s is retired; its content went to %s: cite that instead", n, where)
	}
	return fmt.Sprintf("there is no repo decision %s (no spec/decisions/%s-*.md): cite a record that exists; a bare `decision %s` names the public specification's", n, n, n)
}

// hasEntry reports whether a log entry's title holds title.
func (r records) hasEntry(title string) bool {
	for _, e := range r.entries {
		if strings.Contains(e, title) {
			return true
		}
	}
	return false
}

// recordText checks one comment or paragraph for citations of records,
// tracker issues and documents outside the repository.
func (c *checker) recordText(rel string, line int, s string) {
	at := func(i int) int { return line + strings.Count(s[:i], "\n") }
	for _, m := range repoDecision.FindAllStringSubmatchIndex(s, -1) {
		for _, n := range fourDigits.FindAllString(s[m[2]:m[3]], -1) {
			if p := c.records.problem(n); p != "" {
				c.add(rel, at(m[0]), "repo decision "+n, p)
			}
		}
	}
	for _, m := range logEntry.FindAllStringSubmatchIndex(s, -1) {
		title := strings.TrimSuffix(strings.Join(strings.Fields(s[m[2]:m[3]]), " "), " …")
		if !c.records.hasEntry(title) {
			c.add(rel, at(m[0]), "PERFORMANCE.md log entry "+title, "PERFORMANCE.md has no log entry (### heading) with this title: quote (part of) the title of an entry it has")
		}
	}
	for _, m := range trackerIssue.FindAllStringIndex(s, -1) {
		c.add(rel, at(m[0]), strings.Join(strings.Fields(s[m[0]:m[1]]), " "), "a tracker issue number does not resolve in a clone: cite the spec section, ARCHITECTURE.md §N or repo decision that holds the rule, or drop the number")
	}
	for _, m := range outside.FindAllStringIndex(s, -1) {
		c.add(rel, at(m[0]), s[m[0]:m[1]], "not in this repository: cite ARCHITECTURE.md §N or the page under spec/ instead")
	}
}
