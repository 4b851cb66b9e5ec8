package wire

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/grammartest"
)

func TestTaxonomyIsTheClosedSet(t *testing.T) {
	if len(Taxonomy) != 26 {
		t.Fatalf("taxonomy has %d codes, the lane defines 26", len(Taxonomy))
	}
	retryable := map[Code]bool{ResourceBusy: true, BackendUnavailable: true, RateLimited: true, DeadlineExceeded: true}
	for c, info := range Taxonomy {
		if info.Retryable != retryable[c] {
			t.Errorf("%s retryable = %v", c, info.Retryable)
		}
		if info.Repair == "" || info.Meaning == "" || info.Status < 400 {
			t.Errorf("%s lacks a repair sentence, meaning or status", c)
		}
	}
	want := map[Code]int{InvalidArgument: 400, Unauthenticated: 401, FormUnknown: 404, FormUnavailable: 409,
		UnsupportedCapability: 422, RevisionConflict: 412, GenerationConflict: 412, RateLimited: 429, DeadlineExceeded: 504, InternalError: 500, BackendUnavailable: 503}
	for c, s := range want {
		if Taxonomy[c].Status != s {
			t.Errorf("%s status %d, want %d", c, Taxonomy[c].Status, s)
		}
	}
}

func TestCheckEnvelope(t *testing.T) {
	ok := ErrorBody{Code: ResourceBusy, Message: "m", RequestID: "r", Retryable: true}
	if err := CheckEnvelope(409, ok); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status int
		b      ErrorBody
	}{
		{404, ErrorBody{Code: "already_exists", Message: "m", RequestID: "r"}},
		{404, ErrorBody{Code: GenerationConflict, Message: "m", RequestID: "r"}},
		{400, ErrorBody{Code: InvalidArgument, Message: "m", RequestID: "r", Retryable: true}},
		{400, ErrorBody{Code: InvalidArgument, RequestID: "r"}},
	} {
		if CheckEnvelope(c.status, c.b) == nil {
			t.Errorf("accepted %d %+v", c.status, c.b)
		}
	}
}

func TestErrorEnvelopeShape(t *testing.T) {
	e := Errorf(DependencyInUse, "pinned by %s", "x").WithHostCode("pinned").WithDetail("holders", []string{"x"})
	e.RequestID = "req-1"
	b, _ := json.Marshal(e.Envelope())
	want := `{"error":{"code":"dependency_in_use","message":"pinned by x","requestId":"req-1","retryable":false,"hostCode":"pinned","details":{"holders":["x"]}}}`
	if string(b) != want {
		t.Fatalf("%s\nwant %s", b, want)
	}
	if e.Status() != 409 {
		t.Fatal(e.Status())
	}
}

// uidPattern is the metadata.uid grammar of spec/host-api-v1alpha3.md
// §1.4 that ValidUID matches by hand.
var uidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

var uidCorpus = []string{"", "a", "A", "0", ".", "-a", "_a", "a.b_c-D9", "u-019a2b3c4d5e" + strings.Repeat("f", 16), strings.Repeat("a", 128),
	strings.Repeat("a", 129), "a b", "a/b", "é", "a\n", "aé", "a~", "Z" + strings.Repeat("-", 127), "a\x00"}

var uidGrammar = []grammartest.Grammar{{Name: "ValidUID", Re: uidPattern, Match: ValidUID}}

// TestValidUIDAgreement: ValidUID accepts exactly what the regexp does.
func TestValidUIDAgreement(t *testing.T) { grammartest.Table(t, uidGrammar, uidCorpus) }

// FuzzValidUIDAgreement: the same on any value.
func FuzzValidUIDAgreement(f *testing.F) { grammartest.Fuzz(f, uidGrammar, uidCorpus) }
