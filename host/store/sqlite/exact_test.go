package sqlite

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
	"github.com/takoform/takoform/host/store/storetest"
)

// TestExactAnswer: the exact read answers the answer stored with the
// resource View reads, which is the one written; a FormRef differing in any member is not found; and
// a resource held under a FormRef whose group or kind is not its key's
// (which the host never creates; the store does not refuse it) is read
// through View, found under exactly that FormRef and no other.
func TestExactAnswer(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "host.db"), Options{})
	same := storetest.Answered(testResource("same", "uid-same"))
	same.PackageDigest, same.NativeID, same.Generation, same.Revision = "sha256:2222", "native-7", 3, 9
	same.Status = []byte(`{"phase":"Ready"}`)
	other := testResource("other", "uid-other")
	other.FormRef.APIVersion, other.FormRef.Kind = "other.example/v2", "Elsewhere"
	storetest.Answered(other)
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		return errors.Join(tx.CreateResource(same), tx.CreateResource(other))
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*store.Resource{same, other} {
		got, err := s.ExactAnswer(t.Context(), want.Key, want.FormRef)
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
		// Read through View, other answers its members, not its stored bytes.
		wantA := storetest.ExactOf(want, want == same)
		written := *want
		written.Answer = nil // the reads of a Resource leave it nil
		if !reflect.DeepEqual(viewed, &written) || !reflect.DeepEqual(got, wantA) {
			t.Errorf("%s: exact read %+v (%s)\nView %+v\nstored %+v", want.Name, got, got.Body, viewed, want)
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
			if _, err := s.ExactAnswer(t.Context(), r.Key, r.FormRef); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s under another %s: %v, want not found", want.Name, member, err)
			}
		}
	}
}

// TestExactAnswerOfOlderRows: a row written before migration 00003 (no
// stored answer) is read from its columns once the file is migrated; an
// update by this binary stores the answer it is given; an UPDATE by a writer that
// does not know the column (today's main's statement) clears the stored
// answer (the migration's trigger), so the read follows the row.
func TestExactAnswerOfOlderRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, _ := fileAt(t, path, 2)
	r := testResource("old", "uid-old")
	if _, err := db.Exec(`INSERT INTO resources (`+sqlrow.ResourceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sqlrow.ResourceArgs(r)[:19]...); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, path, Options{})
	stored := func() (has bool) {
		t.Helper()
		if err := db.QueryRow(`SELECT answer IS NOT NULL FROM resources WHERE uid = ?`, r.UID).Scan(&has); err != nil {
			t.Fatal(err)
		}
		return has
	}
	check := func(when string, storedWant bool) {
		t.Helper()
		if has := stored(); has != storedWant {
			t.Fatalf("%s: an answer stored = %v, want %v", when, has, storedWant)
		}
		want := storetest.ExactOf(r, storedWant)
		got, err := s.ExactAnswer(t.Context(), r.Key, r.FormRef)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: exact read %+v (%v), want %+v", when, got, err, want)
		}
	}
	check("a row of schema 2", false)
	r.Revision, r.Status = 2, []byte(`{"phase":"Ready"}`)
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.UpdateResource(storetest.Answered(r)) }); err != nil {
		t.Fatal(err)
	}
	check("updated by this binary", true)
	r.Generation, r.Revision, r.Spec = 2, 3, []byte(`{"title":"by main"}`)
	args := sqlrow.ResourceUpdateArgs(r)
	if _, err := db.Exec(`UPDATE resources SET form_api_version = ?, form_kind = ?,
		form_definition_version = ?, form_schema_digest = ?, package_digest = ?,
		generation = ?, revision = ?, spec = ?, spec_digest = ?, status = ?,
		native_id = ?, updated_at = ?
		WHERE uid = ?`, append(args[:12:12], args[len(args)-1])...); err != nil {
		t.Fatal(err)
	}
	check("updated by a writer without the answer column", false)
}
