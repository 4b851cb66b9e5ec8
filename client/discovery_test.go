package client

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const lanePath = "/apis/forms.takoform.com/v1alpha3"

// discoveryDoc renders a discovery document for origin o after mut edits
// its generic form.
func discoveryDoc(o string, mut func(d map[string]any)) []byte {
	d := map[string]any{
		"api_versions": []any{"forms.takoform.com/v1alpha3"},
		"features": map[string]any{
			"service_forms": true, "exact_form_ref": true, "optimistic_concurrency": true,
			"idempotent_lifecycle": true, "operations": true, "artifact_upload": true, "support_profiles": true,
		},
		"endpoints": map[string]any{
			"api":         o + lanePath,
			"artifacts":   o + lanePath + "/artifacts",
			"operations":  o + lanePath + "/operations",
			"support":     o + lanePath + "/support",
			"oidc_issuer": "https://issuer.example",
		},
	}
	if mut != nil {
		mut(d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

func endpoints(d map[string]any) map[string]any { return d["endpoints"].(map[string]any) }
func features(d map[string]any) map[string]any  { return d["features"].(map[string]any) }

func TestValidateDiscovery(t *testing.T) {
	const o = "https://host.example"
	set := func(member, value string) func(map[string]any) {
		return func(d map[string]any) { endpoints(d)[member] = value }
	}
	valid := []struct {
		name     string
		endpoint string
		doc      []byte
	}{
		{"full", o, discoveryDoc(o, nil)},
		{"api only", o, discoveryDoc(o, func(d map[string]any) { d["endpoints"] = map[string]any{"api": o + lanePath} })},
		{"extra boolean feature", o, discoveryDoc(o, func(d map[string]any) { features(d)["streaming"] = false })},
		{"explicit default port is the same origin", o, discoveryDoc(o, set("operations", "https://host.example:443"+lanePath+"/operations"))},
		{"host compared case-insensitively", o, discoveryDoc(o, set("support", "https://HOST.example"+lanePath+"/support"))},
		{"loopback http", "http://127.0.0.1:8080", discoveryDoc("http://127.0.0.1:8080", nil)},
	}
	for _, c := range valid {
		if _, err := ValidateDiscovery(c.endpoint, c.doc); err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
	}

	invalid := []struct {
		name string
		doc  []byte
		want string // part of the error text
	}{
		{"two api versions", discoveryDoc(o, func(d map[string]any) {
			d["api_versions"] = []any{"forms.takoform.com/v1alpha3", "forms.takoform.com/v1alpha2"}
		}), "api_versions"},
		{"other lane", discoveryDoc(o, func(d map[string]any) { d["api_versions"] = []any{"forms.takoform.com/v1alpha2"} }), "api_versions"},
		{"api_versions absent", discoveryDoc(o, func(d map[string]any) { delete(d, "api_versions") }), "api_versions"},
		{"missing feature", discoveryDoc(o, func(d map[string]any) { delete(features(d), "artifact_upload") }), "artifact_upload"},
		{"false feature", discoveryDoc(o, func(d map[string]any) { features(d)["operations"] = false }), "operations"},
		{"extra non-boolean feature", discoveryDoc(o, func(d map[string]any) { features(d)["streaming"] = "yes" }), "streaming"},
		{"api absent", discoveryDoc(o, func(d map[string]any) { delete(endpoints(d), "api") }), "/endpoints/api"},
		{"null endpoint", discoveryDoc(o, func(d map[string]any) { endpoints(d)["artifacts"] = nil }), "null"},
		{"empty endpoint", discoveryDoc(o, set("artifacts", "")), "artifacts"},
		{"unknown endpoint member", discoveryDoc(o, set("graphql", o+lanePath)), "graphql"},
		{"unknown top-level member", discoveryDoc(o, func(d map[string]any) { d["extra"] = true }), "extra"},
		{"cross-origin api host", discoveryDoc(o, set("api", "https://evil.example"+lanePath)), "not the configured endpoint"},
		{"cross-origin api port", discoveryDoc(o, set("api", "https://host.example:8443"+lanePath)), "not the configured endpoint"},
		{"http api on an https origin", discoveryDoc(o, set("api", "http://host.example"+lanePath)), "not the configured endpoint"},
		{"cross-origin artifacts", discoveryDoc(o, set("artifacts", "https://cdn.example"+lanePath+"/artifacts")), "artifacts"},
		{"wrong api path", discoveryDoc(o, set("api", o+"/apis/forms.takoform.com/v1alpha2")), "lane path"},
		{"trailing slash", discoveryDoc(o, set("api", o+lanePath+"/")), "lane path"},
		{"operations at the artifacts path", discoveryDoc(o, set("operations", o+lanePath+"/artifacts")), "lane path"},
		{"%2F in the path", discoveryDoc(o, set("api", o+"/apis/forms.takoform.com%2Fv1alpha3")), "%"},
		{"escaped letter in the path", discoveryDoc(o, set("support", o+"/%61pis/forms.takoform.com/v1alpha3/support")), "%"},
		{"userinfo", discoveryDoc(o, set("api", "https://user:pw@host.example"+lanePath)), "userinfo"},
		{"query", discoveryDoc(o, set("api", o+lanePath+"?x=1")), "query"},
		{"empty query", discoveryDoc(o, set("operations", o+lanePath+"/operations?")), "query"},
		{"fragment", discoveryDoc(o, set("support", o+lanePath+"/support#f")), "fragment"},
		{"relative endpoint", discoveryDoc(o, set("api", lanePath)), "absolute"},
		{"uppercase scheme", discoveryDoc(o, set("api", "HTTPS://host.example"+lanePath)), "absolute"},
		{"http issuer", discoveryDoc(o, set("oidc_issuer", "http://issuer.example")), "oidc_issuer"},
		{"issuer with query", discoveryDoc(o, set("oidc_issuer", "https://issuer.example/?a=b")), "oidc_issuer"},
		{"not JSON", []byte(`<html>`), "JSON"},
		{"duplicate member", []byte(`{"api_versions":["forms.takoform.com/v1alpha3"],"api_versions":["forms.takoform.com/v1alpha3"]}`), "duplicate"},
	}
	for _, c := range invalid {
		_, err := ValidateDiscovery(o, c.doc)
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *ProtocolError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func TestDiscoveryOnNonLoopbackHTTPIsRefused(t *testing.T) {
	o := "http://host.example"
	if _, err := ValidateDiscovery(o, discoveryDoc(o, nil)); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("plain http on a public host accepted: %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	valid := map[string]string{
		"https://host.example":      "https://host.example",
		"https://host.example:8443": "https://host.example:8443",
		"https://host.example:443":  "https://host.example:443",
		"HTTPS://host.example":      "https://host.example",
		"http://127.0.0.1:8080":     "http://127.0.0.1:8080",
		"http://127.9.8.7":          "http://127.9.8.7",
		"http://[::1]:9000":         "http://[::1]:9000",
		"http://localhost:1234":     "http://localhost:1234",
		"http://LocalHost":          "http://LocalHost",
		"https://[2001:db8::1]":     "https://[2001:db8::1]",
	}
	for in, want := range valid {
		got, err := ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	invalid := map[string]string{
		"http://host.example":             "loopback",
		"http://10.0.0.1":                 "loopback",
		"http://128.0.0.1":                "loopback",
		"http://localhost.example.com":    "loopback",
		"http://[::2]":                    "loopback",
		"ftp://host.example":              "scheme",
		"host.example":                    "scheme",
		"":                                "scheme",
		"https://":                        "host",
		"https://host.example/":           "path",
		"https://host.example/apis":       "path",
		"https://host.example?x=1":        "query",
		"https://host.example?":           "query",
		"https://host.example#f":          "fragment",
		"https://user:pw@host.example":    "userinfo",
		"https://@host.example":           "userinfo",
		"https://host.example:0":          "port",
		"https://host.example:65536":      "port",
		"https://host.example:":           "port",
		"https://ho%73t.example":          "percent",
		"http://[::1%25lo0]":              "percent",
		"https://host.example\\evil.test": "backslash",
	}
	for in, want := range invalid {
		got, err := ParseEndpoint(in)
		if err == nil {
			t.Errorf("ParseEndpoint(%q) = %q; want an error mentioning %q", in, got, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseEndpoint(%q): %v; want it to mention %q", in, err, want)
		}
	}
}
