package form

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// A pattern is compiled once per process and shared; a pattern RE2 refuses
// is refused every time and never cached.
func TestCachedRegexp(t *testing.T) {
	a, err := cachedRegexp("^[a-z]+$")
	if err != nil {
		t.Fatal(err)
	}
	b, err := cachedRegexp("^[a-z]+$")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same pattern compiled twice gave two regexps; want the cached one")
	}
	if !a.MatchString("abc") || a.MatchString("ABC") {
		t.Errorf("cached %q matches wrongly", a)
	}
	for range 2 {
		if _, err := cachedRegexp("(?<"); err == nil {
			t.Error("an invalid pattern was accepted")
		}
	}
	if _, ok := patterns.Load("(?<"); ok {
		t.Error("an invalid pattern was cached")
	}
}

// Truncate keeps a short string, and cuts a long one at a UTF-8 boundary
// at or before n bytes, saying how many bytes it left out.
func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"héllo", 2, "h… (5 more bytes)"},
		{"héllo", 3, "hé… (3 more bytes)"},
		{"\xff\xfe", 1, "\xff… (1 more bytes)"},
	} {
		if got := Truncate(c.s, c.n); got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// A list of unknown members names the first five in sorted order, each
// cut to 64 bytes, and counts the rest; a message of any kind stays
// within MaxMessageBytes and its "… (N more bytes)".
func TestLeafMessageBounded(t *testing.T) {
	names := []string{"zeta", "alpha", strings.Repeat("m", 100), "beta", "gamma", "delta", "eta"}
	got := leafMessage(&kind.AdditionalProperties{Properties: names})
	want := "additional properties 'alpha', 'beta', 'delta', 'eta', 'gamma' and 2 more not allowed"
	if got != want {
		t.Errorf("7 unknown members: %q, want %q", got, want)
	}
	got = leafMessage(&kind.AdditionalProperties{Properties: []string{strings.Repeat("m", 100)}})
	if !strings.Contains(got, "… (36 more bytes)") || len(got) > 200 {
		t.Errorf("one long unknown member: %q", got)
	}
	got = leafMessage(&kind.Pattern{Got: strings.Repeat("x", 1<<20), Want: "^a$"})
	if len(got) > MaxMessageBytes+32 {
		t.Errorf("a pattern mismatch of a megabyte: %d bytes", len(got))
	}
}
