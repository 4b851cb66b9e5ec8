package provider

import (
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/spaceid"
)

// FuzzImportID: no import ID makes ParseImportID panic; an accepted one
// has a valid name, a valid or empty space and a valid or absent FormRef,
// and its SPACE/NAME rendering parses back to the same address.
func FuzzImportID(f *testing.F) {
	for _, s := range []string{"cache", "Prod North/cache", `{"name":"cache"}`, `{"space":"s","name":"n","apiVersion":"a","kind":"K","definitionVersion":"0.1.0","schemaDigest":"sha256:00"}`, "/x", "a/b/c", "{", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got, err := ParseImportID(id)
		if err != nil {
			return
		}
		if err := form.ValidateName(got.Name); err != nil {
			t.Fatalf("%q accepted with an invalid name %q: %v", id, got.Name, err)
		}
		if got.Ref != nil {
			if err := got.Ref.Validate(); err != nil {
				t.Fatalf("%q accepted with an invalid FormRef: %v", id, err)
			}
		}
		if got.Space == "" {
			return
		}
		if err := spaceid.Validate(got.Space); err != nil {
			t.Fatalf("%q accepted with an invalid space %q: %v", id, got.Space, err)
		}
		back, err := ParseImportID(got.Space + "/" + got.Name)
		if err != nil || back.Space != got.Space || back.Name != got.Name {
			t.Fatalf("%q: SPACE/NAME %q parses to %+v, %v", id, got.Space+"/"+got.Name, back, err)
		}
	})
}
