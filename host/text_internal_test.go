package host

import (
	"reflect"
	"testing"
)

// TestQueryText: a query decoding to UTF-8 without NUL passes, escaped
// ASCII and UTF-8 included; one escaping other bytes or a NUL in a key or
// a value is refused naming it; a broken escape is left to the route.
func TestQueryText(t *testing.T) {
	for raw, ok := range map[string]bool{
		"":                                    true,
		"space=prod&schemaDigest=sha256%3A00": true,
		"space=caf%C3%A9":                     true,
		"space=caf%c3%a9+x":                   true,
		"space=%zz":                           true, // the route's query_encoding
		"space=%":                             true,
		"space=caf%e9":                        false,
		"space=%ff%fe":                        false,
		"space=a%00b":                         false,
		"x%ff=1":                              false,
		"space=\xff":                          false,
		"space=%C3":                           false, // a lone lead byte
	} {
		if err := checkQueryText(raw); (err == nil) != ok {
			t.Errorf("checkQueryText(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
}

// TestWildcards: a pattern's wildcard names in path order, {$} not one.
func TestWildcards(t *testing.T) {
	got := wildcards("/apis/x/v1/resources/{group}/{version}/{kind}/{name}/import")
	if want := []string{"group", "version", "kind", "name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("wildcards = %q, want %q", got, want)
	}
	if got := wildcards("/a/{rest...}/{$}"); !reflect.DeepEqual(got, []string{"rest"}) {
		t.Errorf("wildcards of a rest pattern = %q", got)
	}
}
