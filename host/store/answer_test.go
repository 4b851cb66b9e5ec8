package store

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/form"
)

// TestEncodeResourceIsJSONMarshal: the hand-assembled resource body is
// byte for byte json.Marshal's, on the fast path and on every fallback.
func TestEncodeResourceIsJSONMarshal(t *testing.T) {
	base := Resource{
		Key: Key{Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", Name: "cache"},
		UID: "0f3c", FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"},
		Generation: 3, Revision: 12, Spec: []byte(`{"a":"b\"c","n":[1,2]}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	cases := map[string]func(r *Resource){
		"fast path":               func(r *Resource) {},
		"package digest":          func(r *Resource) { r.PackageDigest = "sha256:cd" },
		"no uid, zero counters":   func(r *Resource) { r.UID, r.Generation, r.Revision = "", 0, 0 },
		"HTML in spec":            func(r *Resource) { r.Spec = []byte(`{"a":"<b>&"}`) },
		"U+2028 in status":        func(r *Resource) { r.Status = []byte("{\"m\":\"x\u2028y\"}") },
		"indented spec":           func(r *Resource) { r.Spec = []byte("{\"a\": 1}") },
		"space in a string":       func(r *Resource) { r.Spec = []byte(`{"a":"b c"}`) },
		"escaped quote and space": func(r *Resource) { r.Spec = []byte(`{"a":"\\"," b":1}`) },
		"empty status":            func(r *Resource) { r.Status = nil },
		"non-ASCII name":          func(r *Resource) { r.Space = "prod-é" },
		"quote in a name":         func(r *Resource) { r.Kind = `K"` },
	}
	for name, change := range cases {
		r := base
		change(&r)
		want, err := json.Marshal(wireResourceOf(&r))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := EncodeResource(&r)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", name, got, err, want)
		}
	}
}

// A stored spec or status that is not JSON (a damaged row) is never
// answered as a body: EncodeResource refuses it as json.Marshal of the
// wire resource does, and a good row encodes to what json.Marshal writes.
func TestEncodeResourceRefusesStoredNonJSON(t *testing.T) {
	for _, c := range []struct{ spec, status string }{
		{`{"a":}`, `{}`}, {`{}`, `{"x":1`}, {"{\"a\":\"\x01\"}", `{}`}, {`{`, `{}`}, {`{"a":1}}`, `{}`},
		{`{"a":[1,2],"b":"c"}`, `{}`},
	} {
		res := &Resource{Key: Key{Tenant: "t", Space: "s", APIVersion: "a/v1", Kind: "K", Name: "n"},
			FormRef: form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:0"}, UID: "u", Generation: 1, Revision: 1,
			Spec: []byte(c.spec), Status: []byte(c.status)}
		want, merr := json.Marshal(wireResourceOf(res))
		body, err := EncodeResource(res)
		switch {
		case merr != nil && err == nil:
			t.Errorf("spec %q status %q: EncodeResource answered %s; json.Marshal refuses it: %v", c.spec, c.status, body, merr)
		case merr == nil && err != nil:
			t.Errorf("spec %q status %q: EncodeResource refused it (%v); json.Marshal writes %s", c.spec, c.status, err, want)
		case merr == nil && string(body) != string(want):
			t.Errorf("spec %q status %q: EncodeResource wrote %s, json.Marshal %s", c.spec, c.status, body, want)
		}
	}
}

// TestStoredEncodingIsPinned pins the bytes EncodeResource writes for one
// row. The SQL stores keep those bytes beside every row (decision
// spec/decisions/0046-stored-answer.md, 6), so a change to them is a
// change of schema: this test fails until the change comes with a
// migration that clears the stored answers (UPDATE resources SET answer =
// NULL, on both stores) and the new bytes are pinned here.
func TestStoredEncodingIsPinned(t *testing.T) {
	r := &Resource{
		Key: Key{Tenant: "t", Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", Name: "cache"},
		UID: "0f3c", FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"},
		PackageDigest: "sha256:cd", Generation: 3, Revision: 12, SpecDigest: "sha256:ef", NativeID: "n-1",
		Spec: []byte(`{"title":"a"}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	const want = `{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace",` +
		`"form":{"formRef":{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"1.0.0","schemaDigest":"sha256:ab"},"packageDigest":"sha256:cd"},` +
		`"metadata":{"name":"cache","space":"prod","uid":"0f3c","generation":"3","revision":"12"},` +
		`"spec":{"title":"a"},"status":{"observedGeneration":"3"}}`
	got, err := EncodeResource(r)
	if err != nil || string(got) != want {
		t.Fatalf("EncodeResource now writes\n%s (%v)\nnot the pinned\n%s\nRows already stored keep the pinned bytes: add a migration on both stores that clears the stored answers (UPDATE resources SET answer = NULL), then pin the new bytes here.", got, err, want)
	}
}
