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

// TestRequestOfShares: the recorder's request is handed out once; a
// second request on the same writer is its own and does not clobber the
// first, and both carry the writer's exchange.
func TestRequestOfShares(t *testing.T) {
	rec := &recorder{ResponseWriter: httptest.NewRecorder(), x: exchange{id: "req-1"}}
	hr := httptest.NewRequest(http.MethodGet, "/", nil)
	first := requestOf(rec, hr)
	first.caller = Caller{Tenant: "t"}
	second := requestOf(rec, hr)
	if first != &rec.req || second == first || first.caller.Tenant != "t" {
		t.Fatalf("first %p (recorder's %p), second %p, first caller %+v", first, &rec.req, second, first.caller)
	}
	if first.x != &rec.x || second.x != &rec.x || second.id != "req-1" {
		t.Fatalf("exchanges %p %p, want %p; id %q", first.x, second.x, &rec.x, second.id)
	}
	if r := requestOf(httptest.NewRecorder(), hr); r.x == nil || r.id == "" || r.id != r.x.id {
		t.Fatalf("a request off ServeHTTP has exchange %+v and id %q", r.x, r.id)
	}
}
