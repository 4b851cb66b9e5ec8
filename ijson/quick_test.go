package ijson

import (
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/grammartest"
)

// quickCorpus is valid and invalid documents near every rule of Check.
var quickCorpus = []string{
	``, ` `, `{}`, `[]`, `0`, `-0`, `-0.0`, `-0e5`, `-1`, `-1.5e3`, `1e400`, `-1e400`, `1e-400`, `-1e-400`,
	`123456789012345678901234567890`, `-1234567890123456`, `-12345678901234567`, `1E+2`, `0.0`,
	`"x"`, `"\""`, `"\\"`, `"\\\""`, `"-0"`, `{"-0":"1e400"}`, `"\ud800"`, `"\udc00"`, `"\ud83d\ude00"`, `"\q"`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "{\"a\":1}\xff", `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"a":1,"A":2}`,
	`{"a":1} {"b":2}`, `{"a":1} x`, `{"a":NaN}`, `{"a":[1,2`, `{"a":[1,]}`, `[1,-0]`, `{"n":[-0.0]}`,
	`true`, `null`, ` {"a":[1,2,{"b":"\u00e9"}]} `, `[` + `"]"` + `]`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	`{"a":` + strings.Repeat(`{"b":`, MaxDepth) + `1` + strings.Repeat("}", MaxDepth+1),
	`[` + strings.Repeat(`"[",`, MaxDepth+1) + `0]`,
}

// TestQuickAgreement: the one-pass check accepts exactly what the token
// reader accepts, on a table near every rule.
func TestQuickAgreement(t *testing.T) {
	for _, in := range quickCorpus {
		if q, e := quickValid([]byte(in)), checkTokens([]byte(in)); q != (e == nil) {
			t.Errorf("%.80q: quickValid %v, checkTokens %v", in, q, e)
		}
	}
}

// FuzzQuickAgreement: quickValid never accepts a document checkTokens
// refuses, and accepts every document it accepts.
func FuzzQuickAgreement(f *testing.F) {
	for _, in := range quickCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if q, e := quickValid(data), checkTokens(data); q != (e == nil) {
			t.Fatalf("%q: quickValid %v, checkTokens %v", data, q, e)
		}
	})
}

// digestPattern is the digest grammar of spec/host-api-v1alpha3.md §1.3
// that ValidDigest matches by hand.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

var digestCorpus = []string{
	"", "sha256:", "sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("0", 63), "sha256:" + strings.Repeat("f", 65),
	"sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("g", 64), "SHA256:" + strings.Repeat("a", 64),
	"sha512:" + strings.Repeat("a", 64), " sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("a", 63) + "\n",
	"sha256:" + strings.Repeat("9", 32) + strings.Repeat("e", 32), "sha256:" + strings.Repeat("a", 62) + "é",
}

var digestGrammar = []grammartest.Grammar{{Name: "ValidDigest", Re: digestPattern, Match: ValidDigest}}

// TestValidDigestAgreement: ValidDigest accepts exactly what the regexp does.
func TestValidDigestAgreement(t *testing.T) { grammartest.Table(t, digestGrammar, digestCorpus) }

// FuzzValidDigestAgreement: the same on any value.
func FuzzValidDigestAgreement(f *testing.F) { grammartest.Fuzz(f, digestGrammar, digestCorpus) }

// TestScanAgreement: the hand-written check never accepts what the token
// reader refuses, and accepts the plain valid documents of the table.
func TestScanAgreement(t *testing.T) {
	for _, in := range append(quickCorpus, scanCorpus...) {
		s, e := scanValid([]byte(in)), checkTokens([]byte(in))
		if s && e != nil {
			t.Errorf("%.80q: scanValid accepts, checkTokens %v", in, e)
		}
		if !s && e == nil && !strings.Contains(in, `\u`) && !strings.Contains(in, `{"\`) {
			t.Errorf("%.80q: scanValid declines a valid document without surrogates or escaped names", in)
		}
	}
	doc := []byte(scanCorpus[0])
	if n := testing.AllocsPerRun(100, func() { scanValid(doc) }); n != 0 {
		t.Errorf("scanValid allocates %v times", n)
	}
}

// scanCorpus adds documents near scanValid's own edges.
var scanCorpus = []string{
	`{"apiVersion":"a/v1","kind":"K","form":{"formRef":{"apiVersion":"a/v1"}},"metadata":{"name":"n","space":"s"},"spec":{"a":[1,-2.5e-3,true,false,null,"x\n\"y"]}}`,
	`{"a":{"a":{"a":1}},"b":{"a":2}}`, `{"a":1,"b":{"a":1,"b":2},"c":3,"a ":4}`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[1e+]`, `[-]`, `[--1]`,
	`[tru]`, `[nul]`, `[falsey]`, "[\"\x1f\"]", `["\u00zz"]`, `["\u0041\/\b\f\n\r\t"]`, `{"a" : 1 , "b" : [ ] }`, "\t[\r\n]\n",
	`{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, `["a" "b"]`, `{"a":1 "b":2}`, `"é"`, `"\u00e9"`, `0.5e-2`, `-0.1`, `1E400`, `-0E0`, `00`,
}

// FuzzScanAgreement: scanValid never accepts a document checkTokens refuses.
func FuzzScanAgreement(f *testing.F) {
	for _, in := range append(quickCorpus, scanCorpus...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if scanValid(data) {
			if e := checkTokens(data); e != nil {
				t.Fatalf("%q: scanValid accepts, checkTokens %v", data, e)
			}
		}
	})
}
