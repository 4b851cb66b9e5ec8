package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/form"
)

// TestAppendWireIsTheLibrary: the hand-written request bodies are
// json.Marshal's and an unescaping json.Encoder's, or declined.
func TestAppendWireIsTheLibrary(t *testing.T) {
	base := ApplyRequest{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace",
		Form:     FormReference{FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"}},
		Metadata: Metadata{Name: "kv", Space: "bench"}, Spec: []byte(`{"a":[1,"b"]}`), Review: Review{PrepareDigest: "sha256:01"}}
	cases := map[string]func(a *ApplyRequest){
		"fast path":      func(a *ApplyRequest) {},
		"fences":         func(a *ApplyRequest) { a.ExpectedUID, a.ExpectedGeneration = "u-1", "3" },
		"package digest": func(a *ApplyRequest) { a.Form.PackageDigest = "sha256:cd" },
		"counters":       func(a *ApplyRequest) { a.Metadata.UID, a.Metadata.Generation, a.Metadata.Revision = "u", "1", "2" },
		"HTML":           func(a *ApplyRequest) { a.Spec = []byte(`{"a":"<&>"}`) },
		"U+2028":         func(a *ApplyRequest) { a.Metadata.Space = "a\u2028b" },
		"indented":       func(a *ApplyRequest) { a.Spec = []byte("{\"a\": 1}") },
		"escape":         func(a *ApplyRequest) { a.Review.PrepareDigest = `"` },
		"no spec":        func(a *ApplyRequest) { a.Spec = nil },
	}
	for name, change := range cases {
		a := base
		change(&a)
		rr := ResourceRequest{APIVersion: a.APIVersion, Kind: a.Kind, Form: a.Form, Metadata: a.Metadata, Spec: a.Spec}
		for _, v := range []interface{ AppendWire([]byte) ([]byte, bool) }{a, rr} {
			got, ok := v.AppendWire(nil)
			marshalled, err := json.Marshal(v)
			if err != nil {
				continue // the library refuses it too (no spec)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			encoded := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if ok && (!bytes.Equal(got, marshalled) || !bytes.Equal(got, encoded)) {
				t.Errorf("%s %T:\n got     %s\n marshal %s\n encoder %s", name, v, got, marshalled, encoded)
			}
			if !ok && name == "fast path" {
				t.Errorf("%T declines the plain body", v)
			}
		}
	}
}

// TestStatusAppendWireIsJSONMarshal: the hand-written status is
// json.Marshal's, or declined.
func TestStatusAppendWireIsJSONMarshal(t *testing.T) {
	ready := Condition{Type: "Ready", Status: "True", Reason: "Available", LastTransitionTime: "2026-01-01T00:00:00Z"}
	for name, st := range map[string]Status{
		"ready":         {ObservedGeneration: "1", Conditions: []Condition{ready}},
		"no conditions": {ObservedGeneration: "2"},
		"empty list":    {ObservedGeneration: "2", Conditions: []Condition{}},
		"two, reasons":  {ObservedGeneration: "3", Conditions: []Condition{ready, {Type: "X", Status: "False", Reason: "R", LastTransitionTime: "t", HostReason: "h", Message: "m m"}}},
		"outputs":       {ObservedGeneration: "1", Conditions: []Condition{ready}, Outputs: []byte(`{"url":"https://x/"}`), Observed: []byte(`{"a":1}`)},
		"ellipsis":      {ObservedGeneration: "1", Conditions: []Condition{{Type: "Ready", HostReason: "a…"}}},
		"HTML output":   {ObservedGeneration: "1", Outputs: []byte(`{"a":"<"}`)},
	} {
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := st.AppendWire(nil)
		if ok && !bytes.Equal(got, want) {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
		if !ok && name == "ready" {
			t.Error("the plain status is declined")
		}
	}
}

// TestVerbatimStringIsJSONMarshal: a byte VerbatimString passes is one
// json.Marshal writes as it is, and every printable ASCII byte it refuses
// is one json.Marshal escapes.
func TestVerbatimStringIsJSONMarshal(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		b, _ := json.Marshal(s)
		unchanged := string(b) == `"`+s+`"`
		if VerbatimString(s) && !unchanged || !VerbatimString(s) && unchanged && c >= 0x20 && c < 0x7f {
			t.Errorf("byte %#x: VerbatimString %v, json.Marshal %s", c, VerbatimString(s), b)
		}
	}
}
