package form

import "testing"

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
