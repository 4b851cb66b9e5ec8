// Package grammartest holds hand-written matchers to the regular
// expressions they replace (spec/decisions/0036-hand-written-grammars.md):
// the same verdict on a table of values near every edge and, fuzzed, on
// any value.
package grammartest

import (
	"regexp"
	"testing"
)

// Grammar is one hand-written matcher and the regexp that is its oracle.
type Grammar struct {
	Name  string
	Re    *regexp.Regexp
	Match func(string) bool
}

// Table fails t for every value of corpus on which a matcher of gs and its
// regexp disagree.
func Table(t *testing.T, gs []Grammar, corpus []string) {
	t.Helper()
	for _, g := range gs {
		for _, s := range corpus {
			if got, want := g.Match(s), g.Re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, regexp %v", g.Name, s, got, want)
			}
		}
	}
}

// Fuzz fuzzes every matcher of gs against its regexp, seeded with corpus.
func Fuzz(f *testing.F, gs []Grammar, corpus []string) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, g := range gs {
			if got, want := g.Match(s), g.Re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, regexp %v", g.Name, s, got, want)
			}
		}
	})
}
