package ijson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gowebpki/jcs"
)

// readerCorpus is documents for the Reader's decoding and the canonical
// writer: the plain shapes it reads and the ones it leaves to the library.
var readerCorpus = []string{
	`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `{"b":1,"a":[1,2,{"c":null}],"A":true,"_":false}`, ` { "a" : [ 1 , "x" ] } `,
	`"s"`, `1`, `-1.50`, `1e2`, `1E+2`, `0.1`, `123456789012345`, `1234567890123456789`, `-0.0e1`, `[0,-0.5,2.50e-3]`,
	`{"s":"<b>&amp;</b>"}`, `{"s":"a\"b"}`, `{"s":"a\\b"}`, `{"s":"\n\t\u0001"}`, `{"s":"é\u2028x"}`, "{\"s\":\"\u2028\"}",
	`{"é":1,"e":2}`, `{"\u00e9":1}`, `{"z":{"y":{"x":[true,false,null]}}}`, `[{"b":1,"a":2},{"d":3,"c":4}]`,
	`{"n":1.0,"m":100,"k":1e21,"j":1e-7}`,
}

// TestDecodeAgreement: what the Reader decodes is what encoding/json
// decodes, and the canonical bytes written from it are jcs.Transform's.
func TestDecodeAgreement(t *testing.T) {
	for _, in := range append(readerCorpus, scanCorpus...) {
		compareDecode(t, []byte(in))
	}
	if _, ok := decodeFast([]byte(`{"a":"b"}`)); !ok {
		t.Error("decodeFast declines a plain object")
	}
}

func FuzzDecodeAgreement(f *testing.F) {
	for _, in := range append(readerCorpus, scanCorpus...) {
		f.Add([]byte(in))
	}
	f.Fuzz(compareDecode)
}

func compareDecode(t *testing.T, data []byte) {
	if Check(data) != nil {
		return
	}
	want, err := decodeLibrary(data)
	if err != nil {
		t.Fatalf("%q: library: %v", data, err)
	}
	if got, ok := decodeFast(data); ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeFast %#v, library %#v", data, got, want)
	}
	wantC, err := jcs.Transform(data)
	if err != nil {
		return
	}
	if got, err := Canonical(data); err != nil || !bytes.Equal(got, wantC) {
		t.Fatalf("%q: Canonical %s (%v), jcs %s", data, got, err, wantC)
	}
	compareCanonicalValue(t, want)
}

// compareCanonicalValue fails t unless CanonicalValue(v) is jcs.Transform
// of json.Marshal(v).
func compareCanonicalValue(t *testing.T, v any) {
	marshalled, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jcs.Transform(marshalled)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := CanonicalValue(v); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%#v: CanonicalValue %s (%v), jcs of json.Marshal %s", v, got, err, want)
	}
}

// TestCanonicalValueAgreement: values no document decodes to (invalid
// UTF-8, other Go types) take the library and still agree.
func TestCanonicalValueAgreement(t *testing.T) {
	for _, v := range []any{
		map[string]any{"a": "\xff", "b": 1.5}, map[string]any{"x": []string{"<", ">"}}, json.Number("1.0"), json.Number("-0"),
		[]any{float64(3), int64(4), "\u2029&"}, map[string]any{"\U0001F600": 1, "\uFFFD": 2},
	} {
		compareCanonicalValue(t, v)
	}
}

// FuzzReaderUnchecked: on a document that was never checked the Reader
// may fail, but never panics.
func FuzzReaderUnchecked(f *testing.F) {
	for _, in := range append(readerCorpus, quickCorpus...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeFast(data)
		r := NewReader(data)
		r.Object()
		for _, ok := r.Member(); ok; _, ok = r.Member() {
			r.Skip()
		}
		_ = r.Raw()
	})
}
