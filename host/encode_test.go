package host

import (
	"bytes"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// TestEncodeResourceIsJSONMarshal: the hand-assembled resource body is
// byte for byte json.Marshal's, on the fast path and on every fallback.
func TestEncodeResourceIsJSONMarshal(t *testing.T) {
	base := store.Resource{
		Key: store.Key{Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", Name: "cache"},
		UID: "0f3c", FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"},
		Generation: 3, Revision: 12, Spec: []byte(`{"a":"b\"c","n":[1,2]}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	cases := map[string]func(r *store.Resource){
		"fast path":               func(r *store.Resource) {},
		"package digest":          func(r *store.Resource) { r.PackageDigest = "sha256:cd" },
		"no uid, zero counters":   func(r *store.Resource) { r.UID, r.Generation, r.Revision = "", 0, 0 },
		"HTML in spec":            func(r *store.Resource) { r.Spec = []byte(`{"a":"<b>&"}`) },
		"U+2028 in status":        func(r *store.Resource) { r.Status = []byte("{\"m\":\"x\u2028y\"}") },
		"indented spec":           func(r *store.Resource) { r.Spec = []byte("{\"a\": 1}") },
		"space in a string":       func(r *store.Resource) { r.Spec = []byte(`{"a":"b c"}`) },
		"escaped quote and space": func(r *store.Resource) { r.Spec = []byte(`{"a":"\\"," b":1}`) },
		"empty status":            func(r *store.Resource) { r.Status = nil },
		"non-ASCII name":          func(r *store.Resource) { r.Space = "prod-é" },
		"quote in a name":         func(r *store.Resource) { r.Kind = `K"` },
	}
	for name, change := range cases {
		r := base
		change(&r)
		want := mustJSON(wireResourceOf(&r))
		if got := encodeResource(&r); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
