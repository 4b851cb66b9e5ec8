package lifecycle

import (
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// TestStoredEncodingIsPinned pins the bytes the host encodes for one row
// and hands the store to keep (withAnswer). The SQL stores keep those
// bytes beside every row (spec/decisions/0046-stored-answer.md, 6;
// spec/decisions/0065-store-keeps-answer-bytes.md), so a change to them
// is a change of schema: this test fails until the change comes with a
// migration that clears the stored answers (UPDATE resources SET answer =
// NULL, on both stores) and the new bytes are pinned here.
func TestStoredEncodingIsPinned(t *testing.T) {
	r := &store.Resource{
		Key: store.Key{Tenant: "t", Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", Name: "cache"},
		UID: "0f3c", FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"},
		PackageDigest: "sha256:cd", Generation: 3, Revision: 12, SpecDigest: "sha256:ef", NativeID: "n-1",
		Spec: []byte(`{"title":"a"}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	const want = `{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace",` +
		`"form":{"formRef":{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"1.0.0","schemaDigest":"sha256:ab"},"packageDigest":"sha256:cd"},` +
		`"metadata":{"name":"cache","space":"prod","uid":"0f3c","generation":"3","revision":"12"},` +
		`"spec":{"title":"a"},"status":{"observedGeneration":"3"}}`
	if got := string(withAnswer(r).Answer); got != want {
		t.Fatalf("the host now stores\n%s\nnot the pinned\n%s\nRows already stored keep the pinned bytes: add a migration on both stores that clears the stored answers (UPDATE resources SET answer = NULL), then pin the new bytes here.", got, want)
	}
	if got := string(EncodeAnswer(r)); got != want {
		t.Errorf("the answer encoded from the row is\n%s\nnot the stored\n%s", got, want)
	}
	if got := string(AnswerBytes(r)); got != want {
		t.Errorf("a mutation answers\n%s\nnot the stored\n%s", got, want)
	}
	r.Answer = nil
	if got := string(AnswerBytes(r)); got != want {
		t.Errorf("an answer of a row without stored bytes is\n%s\nnot\n%s", got, want)
	}
}

// A resource that does not encode (a spec that is not JSON, as a damaged
// row could hold) is handed to the store without an answer, so the exact
// read encodes its columns and refuses it as before; a later change to a
// resource replaces the answer withAnswer set before it.
func TestWithAnswer(t *testing.T) {
	r := &store.Resource{Key: store.Key{Tenant: "t", Space: "s", APIVersion: "a/v1", Kind: "K", Name: "n"}, UID: "u",
		FormRef:    form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:0"},
		Generation: 1, Revision: 1, Spec: []byte(`{"a":1}`), Status: []byte(`{}`)}
	first := string(withAnswer(r).Answer)
	r.Revision = 2
	if second := string(withAnswer(r).Answer); second == first || second != string(EncodeAnswer(r)) {
		t.Errorf("withAnswer after a change: %s; before it %s; the resource encodes as %s", second, first, EncodeAnswer(r))
	}
	r.Spec = []byte(`{"a":}`)
	if withAnswer(r).Answer != nil {
		t.Errorf("a resource that does not encode was given the answer %s", r.Answer)
	}
}
