package host_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// do sends one request with the given headers (each value a header line
// of its own) and returns the answer and its body.
func do(t *testing.T, method, url string, header http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// envelopeIn decodes and checks the error envelope of an answer's body.
func envelopeIn(t *testing.T, what string, resp *http.Response, b []byte) wire.ErrorBody {
	t.Helper()
	var env wire.ErrorEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: HTTP %d without an error envelope: %.300s", what, resp.StatusCode, b)
	}
	if err := wire.CheckEnvelope(resp.StatusCode, env.Error); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return env.Error
}

// TestOperatorPathsAreReadOnly: /livez, /readyz and /metrics answer GET
// and HEAD; any other method is 405 with Allow: GET, HEAD and a line
// naming the fix, and headers over the limit are refused in the envelope
// as on every route — on the API listener and on the metrics listener
// (MetricsHandler) alike.
func TestOperatorPathsAreReadOnly(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	apart := httptest.NewServer(h.Server.MetricsHandler())
	t.Cleanup(apart.Close)
	big := http.Header{"X-Padding": {strings.Repeat("p", 100<<10)}}
	for _, url := range []string{h.URL + "/livez", h.URL + "/readyz", h.URL + "/metrics", apart.URL + "/metrics"} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			if resp, _ := do(t, m, url, nil, ""); resp.StatusCode != 200 {
				t.Errorf("%s %s = %d, want 200", m, url, resp.StatusCode)
			}
		}
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, "BREW"} {
			resp, b := do(t, m, url, nil, `{}`)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(b), "answers GET and HEAD only") {
				t.Errorf("%s %s = %d Allow %q %q; want 405 with Allow: GET, HEAD", m, url, resp.StatusCode, resp.Header.Get("Allow"), b)
			}
		}
		resp, b := do(t, http.MethodGet, url, big, "")
		if e := envelopeIn(t, "100 KiB of headers on "+url, resp, b); e.Code != wire.InvalidArgument || e.HostCode != "headers_too_large" {
			t.Errorf("100 KiB of headers on %s: %d %+v", url, resp.StatusCode, e)
		}
	}
}

// TestContentTypeCharset: a JSON route takes its body in UTF-8 only; a
// Content-Type naming another charset is refused in the envelope, naming
// it, while utf-8 in any case and no charset are taken.
func TestContentTypeCharset(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	url := h.URL + wire.V1alpha3.APIBase + "/resources/validate"
	for _, cs := range []string{"iso-8859-1", "utf-16", "latin1", "us-ascii"} {
		resp, b := do(t, http.MethodPost, url, http.Header{"Authorization": {"Bearer " + hosttest.TokenA1}, "Content-Type": {"application/json; charset=" + cs}}, `{}`)
		e := envelopeIn(t, cs, resp, b)
		if e.Code != wire.InvalidArgument || e.HostCode != "content_type" || !strings.Contains(e.Message, cs) || !strings.Contains(e.Message, "UTF-8") {
			t.Errorf("charset %s: %+v", cs, e)
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "application/json; charset=UTF-8", "application/json;charset=\"utf-8\""} {
		resp, b := do(t, http.MethodPost, url, http.Header{"Authorization": {"Bearer " + hosttest.TokenA1}, "Content-Type": {ct}}, `{}`)
		if e := envelopeIn(t, ct, resp, b); e.HostCode == "content_type" {
			t.Errorf("Content-Type %s was refused: %+v", ct, e)
		}
	}
}

// TestTwoAuthorizationHeaders: a request carrying two Authorization
// headers is refused unauthenticated, naming the repeat, even when the
// first is valid — on an API route and on the tail route.
func TestTwoAuthorizationHeaders(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	for _, pair := range [][]string{
		{"Bearer " + hosttest.TokenA1, "Bearer " + hosttest.TokenB},
		{"Bearer " + hosttest.TokenA1, "Bearer nobody"},
		{"Bearer " + hosttest.TokenA1, "Bearer " + hosttest.TokenA1},
	} {
		for _, path := range []string{wire.V1alpha3.APIBase + "/support/forms", wire.TailPath + "?space=s&worker=w"} {
			resp, b := do(t, http.MethodGet, h.URL+path, http.Header{"Authorization": pair}, "")
			e := envelopeIn(t, path, resp, b)
			if e.Code != wire.Unauthenticated || e.HostCode != "authorization_repeated" || !strings.Contains(e.Message, "exactly one") {
				t.Errorf("%s with %d Authorization headers: %+v", path, len(pair), e)
			}
		}
	}
	if resp, _ := do(t, http.MethodGet, h.URL+wire.V1alpha3.APIBase+"/support/forms", http.Header{"Authorization": {"Bearer " + hosttest.TokenA1}}, ""); resp.StatusCode != 200 {
		t.Fatalf("one Authorization header: %d", resp.StatusCode)
	}
}

// TestErrorSizeIsBounded: a spec with 100,000 unknown members is refused
// by prepare with a message naming the first few and counting the rest,
// and the whole answer stays small; validate's answer does too.
func TestErrorSizeIsBounded(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, c, "bounded")
	var spec strings.Builder
	spec.WriteString("{")
	for i := range 100000 {
		if i > 0 {
			spec.WriteString(",")
		}
		spec.WriteString(`"unknownxxxx` + strconv.Itoa(i) + `":1`)
	}
	spec.WriteString("}")
	req.Spec = json.RawMessage(spec.String())
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	auth := http.Header{"Authorization": {"Bearer " + hosttest.TokenA1}}
	resp, b := do(t, http.MethodPost, h.URL+wire.V1alpha3.APIBase+"/resources/prepare", auth, string(body))
	e := envelopeIn(t, "prepare", resp, b)
	if e.Code != wire.InvalidArgument || !strings.Contains(e.Message, "unknownxxxx0") || !strings.Contains(e.Message, "and 99995 more") {
		t.Errorf("prepare of 100,000 unknown members: %.500s", e.Message)
	}
	if len(b) > 16<<10 {
		t.Errorf("prepare's refusal of 100,000 unknown members takes %d bytes, want at most 16 KiB", len(b))
	}
	resp, b = do(t, http.MethodPost, h.URL+wire.V1alpha3.APIBase+"/resources/validate", auth, string(body))
	if resp.StatusCode != 200 || len(b) > 16<<10 || !strings.Contains(string(b), "and 99995 more") {
		t.Errorf("validate of 100,000 unknown members: %d, %d bytes: %.300s", resp.StatusCode, len(b), b)
	}

	// One input of a megabyte, in a spec member's name, a member name of
	// the envelope, and metadata.name: each refusal stays small.
	long := strings.Repeat("n", 1<<20)
	for what, mutate := range map[string]func(r *wire.ResourceRequest) []byte{
		"a spec member name": func(r *wire.ResourceRequest) []byte {
			r.Spec = json.RawMessage(`{"` + long + `":1}`)
			return mustMarshal(t, r)
		},
		"an envelope member name": func(r *wire.ResourceRequest) []byte {
			b := mustMarshal(t, r)
			return append([]byte(`{"`+long+`":1,`), b[1:]...)
		},
		"metadata.name": func(r *wire.ResourceRequest) []byte {
			r.Metadata.Name = long
			return mustMarshal(t, r)
		},
	} {
		r := kvRequest(t, c, "bounded")
		resp, b := do(t, http.MethodPost, h.URL+wire.V1alpha3.APIBase+"/resources/prepare", auth, string(mutate(&r)))
		if e := envelopeIn(t, what, resp, b); e.Code != wire.InvalidArgument || len(b) > 16<<10 {
			t.Errorf("prepare with a megabyte in %s: %s, %d bytes", what, e.Code, len(b))
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
