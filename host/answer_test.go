package host

import (
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
)

// TestAnswersAreTheStoredBytes: an exact read and a mutation answer with
// the bytes the engine handed the store with the row, and encode them
// from the row only when it holds none, as the engine would
// (lifecycle.EncodeAnswer; TestStoredEncodingIsPinned in host/lifecycle
// pins those bytes).
func TestAnswersAreTheStoredBytes(t *testing.T) {
	r := &store.Resource{
		Key: store.Key{Tenant: "t", Space: "prod", APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", Name: "cache"},
		UID: "0f3c", FormRef: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:ab"},
		PackageDigest: "sha256:cd", Generation: 3, Revision: 12, SpecDigest: "sha256:ef", NativeID: "n-1",
		Spec: []byte(`{"title":"a"}`), Status: []byte(`{"observedGeneration":"3"}`),
	}
	want := string(lifecycle.EncodeAnswer(r))
	if got := string(answerBody(&store.Answer{Resource: r})); got != want {
		t.Errorf("an exact read of a row without a stored answer answers\n%s\nnot\n%s", got, want)
	}
	if a := resourceAnswer(200, r); string(a.body) != want || a.etag != `"12"` || a.status != 200 {
		t.Errorf("a mutation answers %d %s\n%s\nnot 200 \"12\"\n%s", a.status, a.etag, a.body, want)
	}
	stored := []byte(`{"stored":true}`) // what the store returns is answered verbatim
	if got := string(answerBody(&store.Answer{Resource: r, Body: stored})); got != string(stored) {
		t.Errorf("an exact read of a row with a stored answer answers %s, not the stored %s", got, stored)
	}
	r.Answer = stored
	if got := string(resourceAnswer(200, r).body); got != string(stored) {
		t.Errorf("a mutation that wrote %s answers %s", stored, got)
	}
}
