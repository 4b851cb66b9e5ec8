package host

import (
	"bytes"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// TestEncodePrepareIsJSONMarshal: the hand-assembled prepare answer is
// byte for byte json.Marshal's, on the fast path and every fallback.
func TestEncodePrepareIsJSONMarshal(t *testing.T) {
	base := wire.PrepareResponse{
		Resource: wire.ResourceRequest{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace",
			Form:     wire.FormReference{FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"}},
			Metadata: wire.Metadata{Name: "kv", Space: "bench"}, Spec: []byte(`{"a":[1,"b"]}`)},
		Review: wire.PrepareReview{PrepareDigest: "sha256:01", SpecDigest: "sha256:02"},
	}
	cases := map[string]func(p *wire.PrepareResponse){
		"fast path":         func(p *wire.PrepareResponse) {},
		"package digest":    func(p *wire.PrepareResponse) { p.Resource.Form.PackageDigest = "sha256:cd" },
		"echoed counters":   func(p *wire.PrepareResponse) { p.Resource.Metadata.UID, p.Resource.Metadata.Generation = "u-1", "4" },
		"HTML in spec":      func(p *wire.PrepareResponse) { p.Resource.Spec = []byte(`{"a":"<&>"}`) },
		"no spec":           func(p *wire.PrepareResponse) { p.Resource.Spec = nil },
		"quote in a digest": func(p *wire.PrepareResponse) { p.Review.SpecDigest = `"` },
		"non-ASCII space":   func(p *wire.PrepareResponse) { p.Resource.Metadata.Space = "é" },
	}
	for name, change := range cases {
		p := base
		change(&p)
		if got, want := encodePrepare(&p), mustJSON(p); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

var bodySpaceCorpus = []string{
	`{"metadata":{"name":"n","space":"s"},"spec":{"metadata":{"space":"x"}}}`, `{"metadata":{"space":"a b"}}`, `{}`, `[]`, `"x"`, `1`,
	`{"metadata":null}`, `{"metadata":{"space":null}}`, `{"metadata":{"space":1}}`, `{"metadata":[]}`, `{"Metadata":{"space":"s"}}`,
	`{"metadata":{"Space":"s"}}`, `{"metadata":{"SPACE":"s","space":"t"}}`, `{"metadata":{"ſpace":"s"}}`, `{"metadata":{"space":"\u0041"}}`,
	`{"metadata":{"space":"s"},"METADATA":{"space":"t"}}`, `{"a":null,"b":[1,{"c":"d"}],"metadata":{"x":null,"space":"s"}}`,
	`{"metadata":{"space":"é"}}`, `{"méta":1,"metadata":{"space":"s"}}`,
}

// TestBodySpaceAgreement: the Reader's metadata.space is encoding/json's
// wherever it answers, and it answers the plain body.
func TestBodySpaceAgreement(t *testing.T) {
	for _, in := range bodySpaceCorpus {
		compareBodySpace(t, []byte(in))
	}
	if _, ok := readBodySpace([]byte(bodySpaceCorpus[0])); !ok {
		t.Error("readBodySpace declines a plain body")
	}
}

func FuzzBodySpaceAgreement(f *testing.F) {
	for _, in := range bodySpaceCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(compareBodySpace)
}

func compareBodySpace(t *testing.T, body []byte) {
	if ijson.Check(body) != nil {
		return
	}
	if got, ok := readBodySpace(body); ok {
		if want := unmarshalBodySpace(body); got != want {
			t.Fatalf("%q: readBodySpace %q, encoding/json %q", body, got, want)
		}
	}
}

// TestOperationEnvelopeIsJSONMarshal: a 202's body, the envelope around the
// operation's stored document, is json.Marshal of the wire.OperationEnvelope.
func TestOperationEnvelopeIsJSONMarshal(t *testing.T) {
	progress := 0
	for _, doc := range []wire.Operation{
		{APIVersion: wire.OperationsAPI, Kind: wire.OperationKind, ID: "op_0a", Metadata: &wire.OperationMetadata{Phase: "Provisioning", Progress: &progress}},
		{APIVersion: wire.OperationsAPI, Kind: wire.OperationKind, ID: "op_<&>", Metadata: &wire.OperationMetadata{Phase: "Provisioning", Progress: &progress}, Target: &wire.OperationTarget{UID: "u-1"}},
	} {
		if got, want := operationEnvelope(mustJSON(doc)), mustJSON(wire.OperationEnvelope{Operation: doc}); !bytes.Equal(got, want) {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
