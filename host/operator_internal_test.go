package host

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/takoform/takoform/wire"
)

// TestHeaderKeysCanonical: the headers the host sets through headerValues
// go into the map under their keys as written, so each key must already be
// in canonical form or a client's lookup (Header.Get) would miss it.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{wire.HeaderRequestID, headerETag, headerRetryAfter, headerContentType, headerContentLength} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header key %q is not canonical (%q)", k, c)
		}
	}
}

// TestHeaderValuesOverflow: more headers than the recorder's array holds
// still each get their own value, and no earlier header is overwritten.
func TestHeaderValuesOverflow(t *testing.T) {
	rec := &recorder{ResponseWriter: httptest.NewRecorder()}
	h := rec.Header()
	keys := []string{"A", "B", "C", "D", "E", "F", "G"}
	for i, k := range keys {
		headerValuesOf(rec).set(h, k, k+string(rune('0'+i)))
	}
	for i, k := range keys {
		if got, want := h.Values(k), []string{k + string(rune('0'+i))}; len(got) != 1 || got[0] != want[0] {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	h.Add("A", "more") // appending to a handed-out slice must not touch its neighbour
	if got := h.Values("B"); len(got) != 1 || got[0] != "B1" {
		t.Errorf("after Add to A, B = %q", got)
	}
}
