package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/form"
)

// TestEncodeResourceIsJSONMarshal: the hand-assembled resource body is
// byte for byte json.Marshal's, on the fast path and on every fallback,
// and json.Marshal writes a RawResource as it writes the Resource with
// the same status.
func TestEncodeResourceIsJSONMarshal(t *testing.T) {
	base := RawResource{
		APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace",
		Form:     FormReference{FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"}},
		Metadata: Metadata{Name: "cache", Space: "prod", UID: "0f3c", Generation: "3", Revision: "12"},
		Spec:     []byte(`{"a":"b\"c","n":[1,2]}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	cases := map[string]func(r *RawResource){
		"fast path":               func(r *RawResource) {},
		"package digest":          func(r *RawResource) { r.Form.PackageDigest = "sha256:cd" },
		"no uid, no counters":     func(r *RawResource) { r.Metadata.UID, r.Metadata.Generation, r.Metadata.Revision = "", "", "" },
		"HTML in spec":            func(r *RawResource) { r.Spec = []byte(`{"a":"<b>&"}`) },
		"U+2028 in status":        func(r *RawResource) { r.Status = []byte("{\"m\":\"x\u2028y\"}") },
		"indented spec":           func(r *RawResource) { r.Spec = []byte("{\"a\": 1}") },
		"space in a string":       func(r *RawResource) { r.Spec = []byte(`{"a":"b c"}`) },
		"escaped quote and space": func(r *RawResource) { r.Spec = []byte(`{"a":"\\"," b":1}`) },
		"empty status":            func(r *RawResource) { r.Status = nil },
		"non-ASCII name":          func(r *RawResource) { r.Metadata.Space = "prod-é" },
		"quote in a name":         func(r *RawResource) { r.Kind = `K"` },
	}
	for name, change := range cases {
		r := base
		change(&r)
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := EncodeResource(&r)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", name, got, err, want)
		}
	}
	st := Status{ObservedGeneration: "3", Conditions: []Condition{{Type: "Ready", Status: "True", Reason: "Ready"}}}
	raw := base
	var err error
	if raw.Status, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	typed, err := json.Marshal(Resource{APIVersion: base.APIVersion, Kind: base.Kind, Form: base.Form, Metadata: base.Metadata, Spec: base.Spec, Status: st})
	if got, _ := EncodeResource(&raw); err != nil || !bytes.Equal(got, typed) {
		t.Errorf("the RawResource encodes as\n%s\nthe Resource with its status decoded as\n%s (%v)", got, typed, err)
	}
}

// A spec or status that is not JSON (a damaged row) is never answered as
// a body: EncodeResource refuses it as json.Marshal does, and a good one
// encodes to what json.Marshal writes.
func TestEncodeResourceRefusesNonJSON(t *testing.T) {
	for _, c := range []struct{ spec, status string }{
		{`{"a":}`, `{}`}, {`{}`, `{"x":1`}, {"{\"a\":\"\x01\"}", `{}`}, {`{`, `{}`}, {`{"a":1}}`, `{}`},
		{`{"a":[1,2],"b":"c"}`, `{}`},
	} {
		r := &RawResource{APIVersion: "a/v1", Kind: "K",
			Form:     FormReference{FormRef: form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:0"}},
			Metadata: Metadata{Name: "n", Space: "s", UID: "u", Generation: "1", Revision: "1"},
			Spec:     []byte(c.spec), Status: []byte(c.status)}
		want, merr := json.Marshal(r)
		body, err := EncodeResource(r)
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
