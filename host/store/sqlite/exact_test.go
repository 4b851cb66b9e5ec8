package sqlite

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// TestExactResource: the exact read answers the resource as View reads
// it, every field; a FormRef differing in any member is not found; and
// a resource held under a FormRef whose group or kind is not its key's
// (which the host never creates; the store does not refuse it) is read
// through View, found under exactly that FormRef and no other.
func TestExactResource(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	same := testResource("same", "uid-same")
	same.PackageDigest, same.NativeID, same.Generation, same.Revision = "sha256:2222", "native-7", 3, 9
	same.Status = []byte(`{"phase":"Ready"}`)
	other := testResource("other", "uid-other")
	other.FormRef.APIVersion, other.FormRef.Kind = "other.example/v2", "Elsewhere"
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		return errors.Join(tx.CreateResource(same), tx.CreateResource(other))
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*store.Resource{same, other} {
		got, err := s.ExactResource(t.Context(), want.Key, want.FormRef)
		if err != nil {
			t.Fatalf("%s: %v", want.Name, err)
		}
		var viewed *store.Resource
		if err := s.View(t.Context(), func(tx store.Tx) error {
			var err error
			viewed, err = tx.Resource(want.Key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, viewed) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: exact read %+v\nView %+v\nstored %+v", want.Name, got, viewed, want)
		}
		for member, ref := range map[string]func(r *store.Resource){
			"apiVersion":        func(r *store.Resource) { r.FormRef.APIVersion = r.Key.APIVersion + "x" },
			"kind":              func(r *store.Resource) { r.FormRef.Kind += "x" },
			"definitionVersion": func(r *store.Resource) { r.FormRef.DefinitionVersion = "9.9.9" },
			"schemaDigest":      func(r *store.Resource) { r.FormRef.SchemaDigest = same.SpecDigest },
			"the key's own":     func(r *store.Resource) { r.FormRef.APIVersion, r.FormRef.Kind = r.Key.APIVersion, r.Key.Kind },
		} {
			r := *want
			ref(&r)
			if r.FormRef == want.FormRef {
				continue // the member is already that (the key's own group and kind of same)
			}
			if _, err := s.ExactResource(t.Context(), r.Key, r.FormRef); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s under another %s: %v, want not found", want.Name, member, err)
			}
		}
	}
}
