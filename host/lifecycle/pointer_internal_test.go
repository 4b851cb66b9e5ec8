package lifecycle

import "testing"

// TestPointerValueArrayIndexes: array indexes in a pointer follow RFC 6901
// §4 ("0" or digits without a leading zero); "+1", "01", "-" and "-1"
// name nothing.
func TestPointerValueArrayIndexes(t *testing.T) {
	doc := map[string]any{"a": []any{"x", "y"}}
	for ptr, want := range map[string]any{"/a/0": "x", "/a/1": "y"} {
		if got, ok := pointerValue(doc, ptr); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", ptr, got, ok, want)
		}
	}
	for _, ptr := range []string{"/a/+1", "/a/01", "/a/-", "/a/-1", "/a/2", "/a/", "/a/1x", "/a/99999999999999999999"} {
		if got, ok := pointerValue(doc, ptr); ok {
			t.Errorf("%s resolved to %v; want nothing", ptr, got)
		}
	}
}
