package edge

import (
	"regexp"
	"testing"
	"time"
)

// FuzzCron: no expression makes ParseCron panic; an accepted schedule
// re-parses from its String to the same sets, and Next is either the zero
// time (never matches) or a later minute that Matches.
func FuzzCron(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 30 2 *", "1-5,10 2 * 1-12/3 MON-FRI", "59 23 31 12 7", "* * * * * *", "", "a b c d e", "*/0 * * * *"} {
		f.Add(s)
	}
	after := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseCron(expr)
		if err != nil {
			return
		}
		again, err := ParseCron(s.String())
		if err != nil || again.sets != s.sets {
			t.Fatalf("%q: re-parse of %q = %v, %v", expr, s.String(), again, err)
		}
		if next := s.Next(after); !next.IsZero() && (!next.After(after) || !s.Matches(next)) {
			t.Fatalf("%q: Next(%s) = %s does not match or is not later", expr, after, next)
		}
	})
}

var canonicalHostname = regexp.MustCompile(`^[a-z0-9.-]{1,253}$`)

// FuzzHostname: no input makes CanonicalHostname panic; an accepted name
// is in the canonical character set and canonicalizing it again is the
// identity.
func FuzzHostname(f *testing.F) {
	for _, s := range []string{"app.example.com", "APP.Example.COM.", "xn--bcher-kva.example", "bücher.example", "a..b", "-a.b", "1.2.3.4", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		c, err := CanonicalHostname(h)
		if err != nil {
			return
		}
		if !canonicalHostname.MatchString(c) {
			t.Fatalf("%q canonicalizes to %q, outside [a-z0-9.-]{1,253}", h, c)
		}
		if again, err := CanonicalHostname(c); err != nil || again != c {
			t.Fatalf("%q → %q → %q, %v: not idempotent", h, c, again, err)
		}
	})
}
