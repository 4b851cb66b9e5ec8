package loader_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/loader"
)

type mod struct {
	Name          string `json:"name"`
	MediaType     string `json:"mediaType"`
	ContentBase64 string `json:"contentBase64"`
}

func jsMod(name, src string) mod {
	return mod{name, "application/javascript+module", base64.StdEncoding.EncodeToString([]byte(src))}
}

type answer struct {
	ExportedHandlers []string `json:"exportedHandlers"`
	Error            *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func post(t *testing.T, url, token string, body any) (int, string) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

func load(main string, declared []string, mods ...mod) map[string]any {
	return map[string]any{"protocol": loader.Protocol, "mainModule": main, "declaredHandlers": declared, "modules": mods}
}

// TestLoaderAdapter posts load requests over HTTP to the adapter on real
// workerd and checks each answer's shape, code and the order of checks
// (spec/runtime-v1.md §7.2–§7.4).
func TestLoaderAdapter(t *testing.T) {
	srv := httptest.NewServer(loader.New(enginetest.Binary(t), "", nil))
	defer srv.Close()
	bad := mod{"w.js", "application/javascript+module", "not base64!"}
	aux := map[string]any{"protocol": loader.Protocol, "mainModule": "w.js", "declaredHandlers": []string{},
		"modules": []mod{jsMod("w.js", `import m from "./w.js.map"; export default {};`)}, "auxiliaryModules": []mod{{"w.js.map", "application/source-map+json", "e30="}}}
	cases := []struct {
		name     string
		body     any
		status   int
		handlers []string
		code     string
	}{
		{"vocabulary order", load("w.js", []string{"queue", "fetch"}, jsMod("w.js", `export default { queue() {}, fetch() {}, scheduled() {} };`)), 200, []string{"fetch", "scheduled", "queue"}, ""},
		{"run-time default export", load("w.js", []string{"fetch"}, jsMod("w.js", `const h = {}; h["fe" + "tch"] = () => {}; export default h;`)), 200, []string{"fetch"}, ""},
		{"empty set", load("w.js", []string{}, jsMod("w.js", `export default function () {}`)), 200, []string{}, ""},
		{"main missing before bad base64", load("nope.js", nil, bad), 422, nil, "module_not_found"},
		{"media type before bad base64", load("w.js", nil, bad, mod{"x.json", "application/json", "e30="}), 422, nil, "unsupported_media_type"},
		{"bad base64", load("w.js", nil, bad), 422, nil, "module_syntax_error"},
		{"unresolved import", load("w.js", nil, jsMod("w.js", `import x from "./x.js"; export default {};`)), 422, nil, "module_not_found"},
		{"built-in import", load("w.js", nil, jsMod("w.js", `import { connect } from "cloudflare:sockets"; export default {};`)), 422, nil, "module_not_found"},
		{"auxiliary import", aux, 422, nil, "unsupported_media_type"},
		{"syntax before handlers", load("w.js", []string{"fetch"}, jsMod("w.js", `export default {`)), 422, nil, "module_syntax_error"},
		{"declared not exported", load("w.js", []string{"scheduled"}, jsMod("w.js", `export default { fetch() {} };`)), 422, nil, "handler_not_exported"},
		{"declared outside vocabulary", load("w.js", []string{"tail"}, jsMod("w.js", `export default { fetch() {} };`)), 422, nil, "handler_not_exported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(t, srv.URL, "", c.body)
			var a answer
			if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Fatalf("answer %d %q is not JSON", status, body)
			}
			switch {
			case status != c.status:
				t.Fatalf("answered %d %s, want %d", status, body, c.status)
			case c.code == "" && (a.Error != nil || a.ExportedHandlers == nil || !slices.Equal(a.ExportedHandlers, c.handlers)):
				t.Fatalf("answered %s, want exportedHandlers %q", body, c.handlers)
			case c.code != "" && (a.Error == nil || a.Error.Code != c.code || a.Error.Message == "" || a.ExportedHandlers != nil):
				t.Fatalf("answered %s, want error code %s", body, c.code)
			}
		})
	}
}

// TestLoaderAdapterNonLoad: what is not a load request gets a status and
// a body with neither exportedHandlers nor error (spec/runtime-v1.md §7.3),
// and a required token is checked.
func TestLoaderAdapterNonLoad(t *testing.T) {
	srv := httptest.NewServer(loader.New(enginetest.Binary(t), "s3cret", nil))
	defer srv.Close()
	ok := load("w.js", nil, jsMod("w.js", `export default {};`))
	check := func(name string, status int, body string, want int) {
		t.Helper()
		if status != want || strings.Contains(body, "exportedHandlers") || strings.Contains(body, `"error"`) {
			t.Errorf("%s: answered %d %q, want %d without a load answer", name, status, body, want)
		}
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	check("GET", resp.StatusCode, string(b), http.StatusMethodNotAllowed)
	s, body := post(t, srv.URL, "", ok)
	check("no token", s, body, http.StatusUnauthorized)
	s, body = post(t, srv.URL, "wrong", ok)
	check("wrong token", s, body, http.StatusUnauthorized)
	s, body = post(t, srv.URL, "s3cret", []byte(`{"protocol":`))
	check("undecodable JSON", s, body, http.StatusBadRequest)
	other := load("w.js", nil, jsMod("w.js", `export default {};`))
	other["protocol"] = "takoform.runtime-abi-loader@v2"
	s, body = post(t, srv.URL, "s3cret", other)
	check("another protocol", s, body, http.StatusBadRequest)
	s, body = post(t, srv.URL, "s3cret", load("w.js", nil, jsMod("w.js", ``), jsMod("w.js", ``)))
	check("a name twice", s, body, http.StatusBadRequest)
	huge := load("w.js", nil, jsMod("w.js", strings.Repeat(" ", loader.MaxRequestBytes)))
	s, body = post(t, srv.URL, "s3cret", huge)
	check("over the cap", s, body, http.StatusRequestEntityTooLarge)
	if s, body := post(t, srv.URL, "s3cret", ok); s != http.StatusOK || !strings.Contains(body, `"exportedHandlers":[]`) {
		t.Errorf("with the token: %d %q, want 200 and an empty set", s, body)
	}
}
