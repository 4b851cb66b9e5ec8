package provider

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

const workerAPI = "edge.forms.takoform.com/v1alpha1"

// TestCodecRoundTripPerKind: for each field kind an attribute value
// encodes to its desired member, and the member, as the host answers it
// (JSON text), decodes back to the same attribute value.
func TestCodecRoundTripPerKind(t *testing.T) {
	rule := []Field{{Member: "path", Attr: "path", Kind: KindString, Required: true}, {Member: "maxAge", Attr: "max_age", Kind: KindInt64}}
	for _, c := range []struct {
		name   string
		f      Field
		attr   any
		member string // the member's JSON text
	}{
		{"string", Field{Kind: KindString}, "eu-west", `"eu-west"`},
		{"int64 beyond float64", Field{Kind: KindInt64}, new(big.Float).SetInt64(9007199254740993), `9007199254740993`},
		{"negative int64", Field{Kind: KindInt64}, big.NewFloat(-3), `-3`},
		{"number", Field{Kind: KindNumber}, big.NewFloat(0.5), `0.5`},
		{"bool", Field{Kind: KindBool}, false, `false`},
		{"relation", Field{Kind: KindRelation, Target: "Worker", TargetAPI: workerAPI}, "api", `{"apiVersion":"` + workerAPI + `","kind":"Worker","name":"api"}`},
		{"string set", Field{Kind: KindStringSet}, []any{"a", "b"}, `["a","b"]`},
		{"empty string list", Field{Kind: KindStringList}, []any{}, `[]`},
		{"binding list", Field{Kind: KindBindingList, Target: "KVNamespace", TargetAPI: workerAPI},
			[]any{map[string]any{"name": "CACHE", "target_name": "cache"}},
			`[{"name":"CACHE","resource":{"apiVersion":"` + workerAPI + `","kind":"KVNamespace","name":"cache"}}]`},
		{"empty binding list", Field{Kind: KindBindingList}, []any{}, `[]`},
		{"object list", Field{Kind: KindObjectList, Nested: rule},
			[]any{map[string]any{"path": "/a", "max_age": big.NewFloat(60)}, map[string]any{"path": "/b", "max_age": nil}},
			`[{"path":"/a","maxAge":60},{"path":"/b"}]`},
		{"json", Field{Kind: KindJSON}, `{"a":[1,2.5,"x"],"b":null}`, `{"a":[1,2.5,"x"],"b":null}`},
		{"object", Field{Kind: KindObject, Nested: []Field{
			{Member: "bundle", Attr: "bundle", Kind: KindRelation, Target: "StaticAssetBundle", TargetAPI: "edge.forms.takoform.com/v1beta1", Required: true},
			{Member: "runWorkerFirst", Attr: "run_worker_first", Kind: KindBool, Required: true},
			{Member: "notFoundHandling", Attr: "not_found_handling", Kind: KindString, Required: true}}},
			map[string]any{"bundle": "site", "run_worker_first": false, "not_found_handling": "single_page_application"},
			`{"bundle":{"apiVersion":"edge.forms.takoform.com/v1beta1","kind":"StaticAssetBundle","name":"site"},"runWorkerFirst":false,"notFoundHandling":"single_page_application"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := encodeField(c.f, c.attr)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			want, err := ijson.Decode([]byte(c.member))
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonRoundTrip(enc); !reflect.DeepEqual(got, want) {
				t.Errorf("encode = %#v, want %s", got, c.member)
			}
			if got := decodeField(c.f, want, nil); !sameGo(got, c.attr) {
				t.Errorf("decode = %#v, want %#v", got, c.attr)
			}
		})
	}
}

// TestCodecDecodeKeepsSpelling: a JSON attribute keeps the prior text
// while it means the same document; a null member is a null attribute.
func TestCodecDecodeKeepsSpelling(t *testing.T) {
	f := Field{Kind: KindJSON}
	doc, err := ijson.Decode([]byte(`{"b":1,"a":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeField(f, doc, `{ "b": 1, "a": 2 }`); got != `{ "b": 1, "a": 2 }` {
		t.Errorf("an equivalent prior spelling was not kept: %v", got)
	}
	if got := decodeField(f, doc, `{"a":3}`); got != `{"a":2,"b":1}` {
		t.Errorf("another document did not decode canonically: %v", got)
	}
	for _, k := range []Kind{KindString, KindInt64, KindNumber, KindBool, KindRelation, KindStringSet, KindStringList, KindBindingList, KindObjectList, KindObject, KindJSON} {
		if got := decodeField(Field{Kind: k}, nil, nil); got != nil {
			t.Errorf("kind %d: a null member decodes to %#v", k, got)
		}
	}
}

// TestCodecEncodeRefusals: a value the member cannot carry is refused
// with a message naming the attribute and why; nothing is encoded.
func TestCodecEncodeRefusals(t *testing.T) {
	fields := []Field{
		{Member: "retries", Attr: "retries", Kind: KindInt64},
		{Member: "ratio", Attr: "ratio", Kind: KindNumber},
		{Member: "worker", Attr: "worker", Kind: KindRelation},
		{Member: "tags", Attr: "tags", Kind: KindStringList},
		{Member: "rules", Attr: "rules", Kind: KindObjectList, Nested: []Field{{Member: "maxAge", Attr: "max_age", Kind: KindInt64}}},
		{Member: "routes", Attr: "routes", Kind: KindBindingList},
		{Member: "extra", Attr: "extra_json", Kind: KindJSON},
		{Member: "assets", Attr: "assets", Kind: KindObject, Nested: []Field{{Member: "maxAge", Attr: "max_age", Kind: KindInt64}}},
	}
	for _, c := range []struct {
		name  string
		attrs map[string]any
		want  string
	}{
		{"fraction for an integer", map[string]any{"retries": big.NewFloat(1.5)}, "attribute retries: 1.5 is not a whole number"},
		{"string for an integer", map[string]any{"retries": "3"}, "attribute retries: not a number"},
		{"string for a number", map[string]any{"ratio": "0.5"}, "attribute ratio: not a number"},
		{"unknown", map[string]any{"retries": Unknown}, "attribute retries is not known yet"},
		{"unknown inside a list", map[string]any{"tags": []any{"a", Unknown}}, "attribute tags is not known yet"},
		{"number for a relation", map[string]any{"worker": big.NewFloat(1)}, "attribute worker: not a string"},
		{"string for a list", map[string]any{"tags": "a"}, "attribute tags: not a list"},
		{"nested fraction", map[string]any{"rules": []any{map[string]any{"max_age": big.NewFloat(0.5)}}}, "attribute rules: attribute max_age: 0.5 is not a whole number"},
		{"list element not an object", map[string]any{"routes": []any{"x"}}, "attribute routes: element 0 is not an object"},
		{"string for an object", map[string]any{"assets": "x"}, "attribute assets: not an object"},
		{"nested object fraction", map[string]any{"assets": map[string]any{"max_age": big.NewFloat(0.5)}}, "attribute assets: attribute max_age: 0.5 is not a whole number"},
		{"not JSON", map[string]any{"extra_json": `{"a":`}, "attribute extra_json: not strict JSON"},
		{"duplicate JSON member", map[string]any{"extra_json": `{"a":1,"a":2}`}, "attribute extra_json: not strict JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, err := encodeFields(fields, c.attrs)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || spec != nil {
				t.Errorf("encode = %v, %v; want the error %q", spec, err, c.want)
			}
		})
	}
	spec, err := encodeFields(fields, map[string]any{"retries": big.NewFloat(2), "ratio": nil})
	if err != nil || !reflect.DeepEqual(spec, map[string]any{"retries": int64(2)}) {
		t.Errorf("null attributes are omitted: %v, %v", spec, err)
	}
}

// TestCodecDecodeEnvelope: Decode records the desired fields, declared
// outputs and the envelope (metadata, FormRef, conditions, readiness,
// drift) of an answer, and refuses an answer whose spec or outputs is not
// an object or lacks a declared output.
func TestCodecDecodeEnvelope(t *testing.T) {
	c := &Codec{Fields: []Field{{Member: "retries", Attr: "retries", Kind: KindInt64}}, Outputs: []string{"url"}}
	res := &wire.Resource{Form: wire.FormReference{PackageDigest: "sha256:pp"},
		Metadata: wire.Metadata{Name: "n", Space: "s", UID: "u", Generation: "2", Revision: "5"},
		Spec:     []byte(`{"retries":3}`),
		Status: wire.Status{ObservedGeneration: "2", Outputs: json.RawMessage(`{"url":"https://x"}`),
			Conditions: []wire.Condition{{Type: "Ready", Status: "False", Reason: "DependencyMissing"}}}}
	res.Form.FormRef.Kind, res.Form.FormRef.APIVersion = "Worker", workerAPI
	attrs := map[string]any{attrPendingOperation: "op_1"}
	if err := c.Decode(res, attrs, nil); err != nil {
		t.Fatal(err)
	}
	e := envelopeOf(attrs)
	want := envelope{Name: "n", Space: "s", UID: "u", Generation: "2", Revision: "5", PackageDigest: "sha256:pp", DriftReason: "DependencyMissing"}
	want.Ref.Kind, want.Ref.APIVersion = "Worker", workerAPI
	if e != want || attrs[attrReady] != false || attrs["url"] != "https://x" || attrs[attrOutputsJSON] != `{"url":"https://x"}` || !sameGo(attrs["retries"], big.NewFloat(3)) {
		t.Errorf("decoded %+v\nwant    %+v\nattrs %v", e, want, attrs)
	}
	for _, bad := range []struct {
		spec, outputs, want string
	}{
		{`[1]`, `{"url":"u"}`, "the spec is a JSON []interface {}, not an object"},
		{`{`, `{"url":"u"}`, "decode spec"},
		{`{}`, `"u"`, "the outputs are a JSON string, not an object"},
		{`{}`, `{}`, `the host answered without declared output "url"`},
	} {
		r := *res
		r.Spec, r.Status.Outputs = []byte(bad.spec), json.RawMessage(bad.outputs)
		if err := c.Decode(&r, map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("spec %s outputs %s: %v, want %q", bad.spec, bad.outputs, err, bad.want)
		}
	}
}
