package wire

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/takoform/takoform/ijson"
)

// decodeCorpus is bodies near every member the hand-written decoders read
// and every case they leave to the library.
var decodeCorpus = []string{
	`{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","form":{"formRef":{"apiVersion":"edge.forms.takoform.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"1.0.0","schemaDigest":"sha256:aa"},"packageDigest":"sha256:bb"},"metadata":{"name":"kv-1","space":"bench","uid":"u-1","generation":"2","revision":"3"},"spec":{"a":[1,{"b":"c"}]},"review":{"prepareDigest":"sha256:cc"},"expectedUid":"u-1","expectedGeneration":"2"}`,
	`{"apiVersion":"a/v1","kind":"K","form":{"formRef":{"apiVersion":"a/v1","kind":"K","definitionVersion":"1","schemaDigest":"d"}},"metadata":{"name":"n","space":"s"},"spec":{},"status":{"observedGeneration":"1","conditions":[{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"t","hostReason":"h","message":"m"}],"outputs":{"x":1},"observed":[]}}`,
	`{"resource":{"apiVersion":"a/v1","kind":"K","form":{"formRef":{}},"metadata":{"name":"n","space":"s"},"spec":{ "a" : 1 }},"review":{"prepareDigest":"p","specDigest":"s"}}`,
	`{"apiVersion":"a/v1","kind":"K","form":{"formRef":{"apiVersion":"a/v1","kind":"K","definitionVersion":"1","schemaDigest":"d"}},"metadata":{"name":"n","space":"s"},"spec":{}}`,
	`{"status":{"conditions":[]}}`, `{"status":{"conditions":null}}`, `{"status":{}}`, `{}`, `[]`, `"x"`, `null`,
	`{"kind":null}`, `{"kind":1}`, `{"kind":"a\"b"}`, `{"kind":"\u0041"}`, `{"Kind":"x"}`, `{"KIND":"x"}`, `{"kind":"x","extra":1}`,
	`{"spec":null}`, `{"spec":"s"}`, `{"spec":[1,2]}`, `{"spec":1}`, `{"form":null}`, `{"form":{"formRef":null}}`, `{"metadata":[]}`,
	`{"metadata":{"name":"n","Name":"m"}}`, `{"review":{"prepareDigest":"p","x":1}}`, `{"review":{}}`, `{"expectedUid":""}`,
	`{"resource":{"status":{}}}`, `{"review":{"specDigest":"s"}}`, `{"status":{"conditions":[{"type":"T"},{}]}}`, `{"status":{"conditions":[null]}}`,
	` { "kind" : "k" , "spec" : { } } `,
}

// TestDecodeAgreement: every hand-written decoder gives the library's
// value on each document it accepts, and accepts the plain shapes.
func TestDecodeAgreement(t *testing.T) {
	for _, in := range decodeCorpus {
		compareDecoders(t, []byte(in))
	}
	plain := map[string]bool{}
	for _, in := range decodeCorpus[:4] {
		for _, v := range decoders() {
			if v.ReadIJSON([]byte(in)) {
				plain[reflect.TypeOf(v).String()] = true
			}
		}
	}
	if len(plain) != len(decoders()) {
		t.Errorf("only %v read a plain body", plain)
	}
}

func FuzzDecodeAgreement(f *testing.F) {
	for _, in := range decodeCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(compareDecoders)
}

func decoders() []ijson.FastDecoder {
	return []ijson.FastDecoder{&ResourceRequest{}, &ApplyRequest{}, &PrepareResponse{}, &Resource{}}
}

func compareDecoders(t *testing.T, data []byte) {
	if ijson.Check(data) != nil {
		return
	}
	for _, fast := range decoders() {
		lib := reflect.New(reflect.TypeOf(fast).Elem()).Interface()
		libErr := jsonv2.Unmarshal(data, lib, jsonv2.RejectUnknownMembers(true))
		if !fast.ReadIJSON(data) {
			if !reflect.DeepEqual(fast, reflect.New(reflect.TypeOf(fast).Elem()).Interface()) {
				t.Fatalf("%T declined %q but changed its value: %#v", fast, data, fast)
			}
			continue
		}
		if libErr != nil {
			t.Fatalf("%T read %q, which the library refuses: %v", fast, data, libErr)
		}
		if !reflect.DeepEqual(fast, lib) {
			t.Fatalf("%T on %q:\n fast    %#v\n library %#v", fast, data, fast, lib)
		}
	}
}
