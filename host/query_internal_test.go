package host

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// plainQuery is the exact query as the Go client writes it (client/paths.go).
const plainQuery = "space=team-a&group=edge.example%2Fv1&kind=KvNamespace&definitionVersion=1.0.0&schemaDigest=sha256%3A" +
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// exactQueryCases are query strings near every rule of exactValues and
// of url.ParseQuery's, each read by both in TestExactValuesAgree.
var exactQueryCases = []string{
	plainQuery,
	"schemaDigest=d&definitionVersion=1.0.0&kind=K&group=g%2Fv1&space=s", // any order
	"space=a+b&group=g&kind=K&definitionVersion=1&schemaDigest=%2B",      // '+' is a space, %2B a '+'
	"space=%E2%9C%93&group=g&kind=K&definitionVersion=1&schemaDigest=d",  // UTF-8
	"space=&group=&kind=&definitionVersion=&schemaDigest=",               // empty values
	"space&group&kind&definitionVersion&schemaDigest",                    // no '=' at all
	"space=a=b&group=g&kind=K&definitionVersion=1&schemaDigest=d",        // '=' in a value
	"sp%61ce=s&group=g&kind=K&definitionVersion=1&schemaDigest=d",        // an escaped key: ParseQuery's to read
	"space=s&&group=g&kind=K&definitionVersion=1&schemaDigest=d",         // an empty pair
	"&space=s&group=g&kind=K&definitionVersion=1&schemaDigest=d",
	"space=s&group=g&kind=K&definitionVersion=1&schemaDigest=d&",
	"space=s&group=g&kind=K&definitionVersion=1",                    // a key missing
	"space=s&group=g&kind=K&definitionVersion=1&schemaDigest=d&x=1", // an unknown key
	"space=s&space=t&group=g&kind=K&definitionVersion=1",            // a key twice
	"space=s&group=g&kind=K&kind=K&definitionVersion=1&schemaDigest=d",
	"space=s&group=g&kind=K&definitionVersion=1&schemaDigest=d;x", // a semicolon
	"space=%zz&group=g&kind=K&definitionVersion=1&schemaDigest=d", // broken escapes
	"space=s&group=g&kind=K&definitionVersion=1&schemaDigest=%4",
	"space=s&group=g&kind=K&definitionVersion=1&schemaDigest=%",
	"space=s&group=g&kind=K&definitionVersion=1&Space=d", // keys are case-sensitive
	"",
}

// TestExactValuesAgree holds exactValues to url.ParseQuery (through
// parsedExactValues): what the plain reader accepts the parsed one
// accepts with the same values, and the client's own query string is
// read plainly.
func TestExactValuesAgree(t *testing.T) {
	for _, raw := range exactQueryCases {
		checkExactValues(t, raw)
	}
	if _, ok := exactValues(plainQuery); !ok {
		t.Errorf("the client's query string %q is not read by exactValues", plainQuery)
	}
	want := [len(exactQueryKeys)]string{"a b", "g", "K", "1", "+"}
	if v, ok := exactValues(exactQueryCases[2]); !ok || v != want {
		t.Errorf("exactValues(%q) = %q, %v; want %q", exactQueryCases[2], v, ok, want)
	}
}

// FuzzExactValues: exactValues never accepts a query string that
// url.ParseQuery reads differently or refuses.
func FuzzExactValues(f *testing.F) {
	for _, raw := range exactQueryCases {
		f.Add(raw)
	}
	f.Fuzz(checkExactValues)
}

func checkExactValues(t *testing.T, raw string) {
	v, ok := exactValues(raw)
	if !ok {
		return
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatalf("exactValues accepts %q, which url.ParseQuery refuses: %v", raw, err)
	}
	if len(q) != len(exactQueryKeys) {
		t.Fatalf("exactValues accepts %q, which url.ParseQuery reads as %d keys: %q", raw, len(q), q)
	}
	for i, k := range exactQueryKeys {
		if got := q[k]; !slices.Equal(got, []string{v[i]}) {
			t.Fatalf("exactValues(%q)[%s] = %q; url.ParseQuery reads %q", raw, k, v[i], got)
		}
	}
	pv, err := parsedExactValues(raw)
	if err != nil || pv != v {
		t.Fatalf("exactValues(%q) = %q; parsedExactValues = %q, %v", raw, v, pv, err)
	}
	if strings.Count(raw, "&") != len(exactQueryKeys)-1 {
		t.Fatalf("exactValues accepts %q, which is not five pairs", raw)
	}
}

// FuzzQueryUnescape: queryUnescape decodes as url.QueryUnescape does and
// refuses what it refuses.
func FuzzQueryUnescape(f *testing.F) {
	for _, s := range []string{"", "a", "a+b", "%2F", "%2f%3A", "%", "%4", "%zz", "%%41", "x%E2%9C%93+y", "++%2B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := url.QueryUnescape(s)
		got, ok := queryUnescape(s)
		if ok != (err == nil) || got != want && ok {
			t.Fatalf("queryUnescape(%q) = %q, %v; url.QueryUnescape = %q, %v", s, got, ok, want, err)
		}
	})
}
