package provider

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseImportID: the one import-ID parser (spec/host-api-v1alpha3.md §1.6).
func TestParseImportID(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	full := `{"space":"Prod North","apiVersion":"forms.example.com/v1alpha1","kind":"Gizmo","definitionVersion":"1.0.0","schemaDigest":"` + digest + `","name":"g1"}`
	for _, tc := range []struct {
		id, space, name, kind string
	}{
		{"cache", "", "cache", ""},
		{"prod/cache", "prod", "cache", ""},
		{"Prod North/cache", "Prod North", "cache", ""},
		{"Prod\u00a0North/cache", "Prod\u00a0North", "cache", ""},
		{`{"name":"cache"}`, "", "cache", ""},
		{`{"space":"x","name":"cache"}`, "x", "cache", ""},
		{full, "Prod North", "g1", "Gizmo"},
	} {
		got, err := ParseImportID(tc.id)
		if err != nil {
			t.Errorf("%q: %v", tc.id, err)
			continue
		}
		if got.Space != tc.space || got.Name != tc.name || (tc.kind == "") != (got.Ref == nil) || (got.Ref != nil && got.Ref.Kind != tc.kind) {
			t.Errorf("%q parsed as %+v", tc.id, got)
		}
	}
	for _, id := range []string{
		"", "Cache", "prod/", "/cache", " prod/cache", "prod /cache", "a/b/c", "pro\x01d/cache",
		`{"name":"cache"`, `{"name":"cache","extra":1}`, `{"name":"cache","name":"other"}`,
		`{"apiVersion":"forms.example.com/v1alpha1","kind":"Gizmo","name":"g1"}`,
		`{"apiVersion":"forms.example.com/v1alpha1","kind":"Gizmo","definitionVersion":"1.0.0","schemaDigest":"sha256:zz","name":"g1"}`,
		`{"space":"a/b","name":"cache"}`,
	} {
		if got, err := ParseImportID(id); err == nil {
			t.Errorf("%q accepted as %+v", id, got)
		}
	}
}

// TestImportIDFromIdentity: an import identity goes through the same
// parser, member for member: name alone, space, all four FormRef members;
// partial FormRef members, a bad space or name, an unknown member value
// and invalid UTF-8 are refused — never defaulted.
func TestImportIDFromIdentity(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	ref := map[string]any{"api_version": "forms.example.com/v1alpha1", "kind": "Gizmo", "definition_version": "1.0.0", "schema_digest": digest}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		members     map[string]any
		space, name string
		exact       bool
	}{
		{map[string]any{"name": "cache"}, "", "cache", false},
		{map[string]any{"name": "cache", "space": "Prod North", "kind": nil}, "Prod North", "cache", false},
		{with(ref, "name", "g1", "space", "lab"), "lab", "g1", true},
	} {
		got, err := ImportIDFromIdentity(tc.members)
		if err != nil || got.Space != tc.space || got.Name != tc.name || (got.Ref != nil) != tc.exact {
			t.Errorf("%v parsed as %+v, %v", tc.members, got, err)
		}
		if tc.exact && (got.Ref.DefinitionVersion != "1.0.0" || got.Ref.SchemaDigest != digest) {
			t.Errorf("%v: ref %+v", tc.members, got.Ref)
		}
	}
	for _, m := range []map[string]any{
		{},
		{"name": "Cache"},
		{"name": "cache", "space": " prod"},
		{"name": "g1", "api_version": "forms.example.com/v1alpha1", "kind": "Gizmo"},
		with(ref, "name", "g1", "schema_digest", "sha256:zz"),
		with(ref, "name", "g1", "kind", Unknown),
		{"name": "cache", "space": "pro\xffd"},
	} {
		if got, err := ImportIDFromIdentity(m); err == nil {
			t.Errorf("%v accepted as %+v", m, got)
		}
	}
}
