package provider

import (
	"strings"
	"testing"
)

// TestParseImportID: the one import-ID parser (brief §1.6).
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
