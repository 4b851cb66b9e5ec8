package form_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
)

const ifaceDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
const formDigest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

// widget is a small third-party Form in its own group: one mutable field
// with a default, one immutable relation, one binding list and an open map.
func widget() map[string]any {
	return decode(`{
  "apiVersion": "forms.example.com/v1alpha1",
  "kind": "Widget",
  "definitionVersion": "1.2.0",
  "title": "Widget",
  "role": "identity",
  "desiredSchema": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": false,
    "required": ["size", "owner"],
    "properties": {
      "size": {"type": "integer", "minimum": 1, "maximum": 10},
      "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
      "labels": {"type": "object", "default": {},
        "additionalProperties": {"type": "string"},
        "propertyNames": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9._-]{0,63}$", "x-takoform-fieldPolicy": "portable-data-only-v1"}},
      "owner": {"type": "object", "additionalProperties": false, "required": ["apiVersion", "kind", "name"],
        "properties": {
          "apiVersion": {"type": "string", "const": "forms.example.com/v1alpha1"},
          "kind": {"type": "string", "const": "Gadget"},
          "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,62}$"}},
        "x-takoform-target-formrefs": [{"apiVersion": "forms.example.com/v1alpha1", "kind": "Gadget", "definitionVersion": "1.0.0", "schemaDigest": "` + formDigest + `"}]},
      "links": {"type": "array", "default": [], "x-takoform-binding": "widget.link",
        "items": {"type": "object", "additionalProperties": false, "required": ["name", "resource"],
          "properties": {
            "name": {"type": "string"},
            "resource": {"type": "object", "additionalProperties": false, "required": ["apiVersion", "kind", "name"],
              "properties": {
                "apiVersion": {"type": "string", "const": "forms.example.com/v1alpha1"},
                "kind": {"type": "string", "const": "Gadget"},
                "name": {"type": "string"}},
              "x-takoform-required-interface": {"apiVersion": "interfaces.takoform.com/v1alpha1", "name": "example.link", "version": "1.0.0", "schemaDigest": "` + ifaceDigest + `"}}}}}
    }
  },
  "immutableFields": ["/owner"],
  "lifecycleCapabilities": ["create", "read", "update", "delete", "import", "observe"]
}`).(map[string]any)
}

func decode(s string) any {
	v, err := ijson.Decode([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func parse(t *testing.T, doc map[string]any) *form.Definition {
	t.Helper()
	d, err := form.Parse(encode(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

func at(doc map[string]any, path ...string) map[string]any {
	cur := doc
	for _, p := range path {
		cur = cur[p].(map[string]any)
	}
	return cur
}

func TestParseWidget(t *testing.T) {
	d := parse(t, widget())
	ref := d.Ref()
	if ref.APIVersion != "forms.example.com/v1alpha1" || ref.Kind != "Widget" || ref.DefinitionVersion != "1.2.0" {
		t.Fatalf("ref = %v", ref)
	}
	want, _ := ijson.Digest(encode(widget()))
	if ref.SchemaDigest != want {
		t.Fatalf("digest %s, want JCS digest of the whole document %s", ref.SchemaDigest, want)
	}
	rels := d.Relations()
	if len(rels) != 2 || rels[0].Pointer != "/links/*/resource" || rels[0].Binding != "widget.link" || rels[0].BindingList != "links" ||
		rels[0].RequiredInterface == nil || rels[1].Pointer != "/owner" || len(rels[1].TargetFormRefs) != 1 {
		t.Fatalf("relations = %+v", rels)
	}
	if !d.Has(form.CapUpdate) || !d.IsImmutable("owner") || d.IsImmutable("size") {
		t.Fatal("capabilities or immutability misread")
	}
}

func TestParseRefusesStructuralFaults(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(m map[string]any)
		pointer string
		words   string
	}{
		{"open object", func(m map[string]any) { delete(at(m, "desiredSchema", "properties", "owner"), "additionalProperties") },
			"/desiredSchema/properties/owner", "closed"},
		{"root open", func(m map[string]any) { at(m, "desiredSchema")["additionalProperties"] = true },
			"/desiredSchema/additionalProperties", "closed"},
		{"name property", func(m map[string]any) {
			at(m, "desiredSchema", "properties")["name"] = map[string]any{"type": "string"}
		}, "/desiredSchema/properties/name", "metadata.name"},
		{"update on revision", func(m map[string]any) { m["role"] = "revision" }, "/lifecycleCapabilities", "revision"},
		{"update missing", func(m map[string]any) {
			m["lifecycleCapabilities"] = []any{"create", "read", "delete", "import", "observe"}
		}, "/lifecycleCapabilities", "add update"},
		{"update with nothing mutable", func(m map[string]any) {
			m["immutableFields"] = []any{"/owner", "/size", "/color", "/labels", "/links"}
		}, "/lifecycleCapabilities", "every desired field is immutable"},
		{"refresh", func(m map[string]any) {
			m["lifecycleCapabilities"] = append(m["lifecycleCapabilities"].([]any), "refresh")
		}, "/lifecycleCapabilities/6", "observe"},
		{"both annotations", func(m map[string]any) {
			at(m, "desiredSchema", "properties", "owner")["x-takoform-required-interface"] = map[string]any{"apiVersion": "interfaces.takoform.com/v1alpha1", "name": "example.link", "version": "1.0.0", "schemaDigest": ifaceDigest}
		}, "/desiredSchema/properties/owner", "exactly one"},
		{"no annotation", func(m map[string]any) {
			delete(at(m, "desiredSchema", "properties", "owner"), "x-takoform-target-formrefs")
		}, "/desiredSchema/properties/owner", "no target contract"},
		{"target of another kind", func(m map[string]any) {
			refs := at(m, "desiredSchema", "properties", "owner")["x-takoform-target-formrefs"].([]any)
			refs[0].(map[string]any)["kind"] = "Other"
		}, "/desiredSchema/properties/owner/x-takoform-target-formrefs/0", "not of the relation"},
		{"bad target ref", func(m map[string]any) {
			refs := at(m, "desiredSchema", "properties", "owner")["x-takoform-target-formrefs"].([]any)
			refs[0].(map[string]any)["schemaDigest"] = "sha256:XYZ"
		}, "/desiredSchema/properties/owner/x-takoform-target-formrefs/0", "schemaDigest"},
		{"unknown annotation", func(m map[string]any) { at(m, "desiredSchema", "properties", "size")["x-takoform-secret"] = true },
			"/desiredSchema/properties/size/x-takoform-secret", "unknown annotation"},
		{"$id", func(m map[string]any) { at(m, "desiredSchema", "properties", "size")["$id"] = "https://x.example/s" },
			"/desiredSchema/properties/size/$id", "self-contained"},
		{"remote $ref", func(m map[string]any) {
			at(m, "desiredSchema", "properties")["size"] = map[string]any{"$ref": "https://x.example/s.json"}
		}, "/desiredSchema/properties/size/$ref", "inside this schema"},
		{"array without items", func(m map[string]any) { delete(at(m, "desiredSchema", "properties", "links"), "items") },
			"/desiredSchema/properties/links", "items"},
		{"credential field", func(m map[string]any) {
			at(m, "desiredSchema", "properties")["apiToken"] = map[string]any{"type": "string"}
		}, "/desiredSchema/properties/apiToken", "token"},
		{"region field", func(m map[string]any) {
			at(m, "desiredSchema", "properties")["deployRegion"] = map[string]any{"type": "string"}
		}, "/desiredSchema/properties/deployRegion", "region"},
		{"open map without policy", func(m map[string]any) {
			delete(at(m, "desiredSchema", "properties", "labels", "propertyNames"), "x-takoform-fieldPolicy")
		}, "/desiredSchema/properties/labels/propertyNames", "portable-data-only-v1"},
		{"default violates schema", func(m map[string]any) { at(m, "desiredSchema", "properties", "color")["default"] = "green" },
			"/desiredSchema/properties/color/default", "default"},
		{"pattern RE2 refuses", func(m map[string]any) {
			at(m, "desiredSchema", "properties", "owner", "properties", "name")["pattern"] = "(?<"
		}, "/desiredSchema", "does not compile"},
		{"second default violates schema", func(m map[string]any) { at(m, "desiredSchema", "properties", "links")["default"] = "none" },
			"/desiredSchema/properties/links/default", "default"},
		{"immutable unknown field", func(m map[string]any) { m["immutableFields"] = []any{"/owner", "/nope"} },
			"/immutableFields/1", "names no property"},
		{"wrong $schema", func(m map[string]any) { at(m, "desiredSchema")["$schema"] = "http://json-schema.org/draft-07/schema#" },
			"/desiredSchema/$schema", "2020-12"},
		{"frozen group", func(m map[string]any) { m["apiVersion"] = "forms.takoform.com/v1alpha2" }, "/apiVersion", "frozen"},
		{"bad version", func(m map[string]any) { m["definitionVersion"] = "1.2" }, "/definitionVersion", "SemVer"},
		{"output not required", func(m map[string]any) {
			m["outputSchema"] = decode(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{"url":{"type":"string"}}}`)
		}, "/outputSchema/properties/url", "required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := widget()
			c.mutate(doc)
			_, err := form.Parse(encode(doc))
			var de *form.DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("Parse accepted the fault (err %v)", err)
			}
			for _, p := range de.Problems {
				if p.Pointer == c.pointer && strings.Contains(p.Message, c.words) {
					return
				}
			}
			t.Fatalf("no problem at %s mentioning %q; got:\n%v", c.pointer, c.words, err)
		})
	}
}

func TestParseRefusesUndecodable(t *testing.T) {
	for _, in := range []string{
		`{"apiVersion":"forms.example.com/v1alpha1","apiVersion":"x"}`,
		`{"apiVersion":"forms.example.com/v1alpha1","extra":true}`,
	} {
		_, err := form.Parse([]byte(in))
		var je *ijson.Error
		if !errors.As(err, &je) {
			t.Errorf("Parse(%s) = %v, want *ijson.Error", in, err)
		}
	}
}

func TestValidateSpecAndDefaults(t *testing.T) {
	d := parse(t, widget())
	owner := map[string]any{"apiVersion": "forms.example.com/v1alpha1", "kind": "Gadget", "name": "g1"}
	bare := map[string]any{"size": json.Number("3"), "owner": owner}
	full := d.Materialize(bare).(map[string]any)
	if full["color"] != "red" || len(full["labels"].(map[string]any)) != 0 || len(full["links"].([]any)) != 0 {
		t.Fatalf("defaults not materialised: %#v", full)
	}
	if _, ok := bare["color"]; ok {
		t.Fatal("Materialize changed its input")
	}
	explicit := map[string]any{"size": json.Number("3"), "owner": owner, "color": "red", "labels": map[string]any{}, "links": []any{}}
	d1, _ := form.SpecDigest(full)
	d2, _ := form.SpecDigest(d.Materialize(explicit))
	if d1 != d2 {
		t.Fatal("omitting a default and writing it give different spec digests")
	}
	kept := d.Materialize(map[string]any{"size": json.Number("3"), "owner": owner, "color": "blue"}).(map[string]any)
	if kept["color"] != "blue" {
		t.Fatal("Materialize overwrote a present value")
	}
	if diags := d.ValidateSpec(full); diags != nil {
		t.Fatalf("valid spec refused: %v", diags)
	}
	bad := d.Materialize(map[string]any{"size": json.Number("11"), "owner": owner, "extra": true})
	diags := d.ValidateSpec(bad)
	pointers := map[string]bool{}
	for _, dg := range diags {
		pointers[dg.Pointer] = true
	}
	if !pointers["/size"] || !pointers[""] {
		t.Fatalf("diagnostics %v lack /size and the root (unexpected member)", diags)
	}
	if diags := d.ValidateSpecJSON([]byte(`{"size":1,"size":2}`)); len(diags) != 1 || diags[0].Pointer != "/size" {
		t.Fatalf("duplicate member diagnostics = %v", diags)
	}
}

func TestReferencesInSpec(t *testing.T) {
	d := parse(t, widget())
	spec := decode(`{"size":1,"owner":{"apiVersion":"forms.example.com/v1alpha1","kind":"Gadget","name":"g1"},
	  "links":[{"name":"A","resource":{"apiVersion":"forms.example.com/v1alpha1","kind":"Gadget","name":"g2"}},
	           {"name":"B","resource":{"apiVersion":"forms.example.com/v1alpha1","kind":"Gadget","name":"g3"}}]}`)
	refs := d.References(spec)
	got := []string{}
	for _, r := range refs {
		got = append(got, r.Pointer+"="+r.Target.Name+":"+r.BindingName)
	}
	want := "/links/0/resource=g2:A /links/1/resource=g3:B /owner=g1:"
	if strings.Join(got, " ") != want {
		t.Fatalf("references %v, want %s", got, want)
	}
}

func TestFormRefGrammar(t *testing.T) {
	good := form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "WorkerVersion", DefinitionVersion: "0.1.0-rc.1+build.5", SchemaDigest: formDigest}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid ref refused: %v", err)
	}
	cases := []struct {
		mutate func(r *form.FormRef)
		member string
	}{
		{func(r *form.FormRef) { r.APIVersion = "forms/v1" }, "apiVersion"},
		{func(r *form.FormRef) { r.APIVersion = "Edge.example.com/v1" }, "apiVersion"},
		{func(r *form.FormRef) { r.APIVersion = "-a.example.com/v1" }, "apiVersion"},
		{func(r *form.FormRef) { r.APIVersion = "forms.takoform.com/v1alpha1" }, "apiVersion"},
		{func(r *form.FormRef) { r.APIVersion = "forms.example.com/v1gamma1" }, "apiVersion"},
		{func(r *form.FormRef) { r.Kind = "workerVersion" }, "kind"},
		{func(r *form.FormRef) { r.Kind = "Worker-Version" }, "kind"},
		{func(r *form.FormRef) { r.DefinitionVersion = "01.0.0" }, "definitionVersion"},
		{func(r *form.FormRef) { r.DefinitionVersion = "v1.0.0" }, "definitionVersion"},
		{func(r *form.FormRef) { r.SchemaDigest = strings.ToUpper(formDigest) }, "schemaDigest"},
		{func(r *form.FormRef) { r.SchemaDigest = "sha512:00" }, "schemaDigest"},
	}
	for _, c := range cases {
		r := good
		c.mutate(&r)
		err := r.Validate()
		var re *form.RefError
		if !errors.As(err, &re) || re.Member != c.member {
			t.Errorf("%+v: err %v, want member %s", r, err, c.member)
		}
	}
	if err := form.ValidateName("Prod"); err == nil {
		t.Error("ValidateName accepted an upper-case name")
	}
	if err := form.ValidateName("app-1"); err != nil {
		t.Error(err)
	}
}

func TestMergeDiagnostics(t *testing.T) {
	sem := []form.Diagnostic{{Pointer: "/cron", Message: "minute 61 is out of range"}}
	schema := []form.Diagnostic{{Pointer: "/cron", Message: "does not match pattern"}, {Pointer: "/worker", Message: "missing"}}
	got := form.MergeDiagnostics(sem, schema)
	if len(got) != 2 || got[0].Message != "minute 61 is out of range" || got[1].Pointer != "/worker" {
		t.Fatalf("merged %v", got)
	}
}
