package postgres

import (
	"reflect"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlrow"
	"github.com/takoform/takoform/host/store/storetest"
)

// answerResource is a resource at name with uid for the stored answer's
// tests.
func answerResource(name, uid string) *store.Resource {
	return &store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: name}, UID: uid,
		FormRef:       form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:01"},
		PackageDigest: "sha256:02", Generation: 1, Revision: 1, Spec: []byte(`{"a":1}`), Status: []byte(`{}`)}
}

// A row written before migration 00005 (no stored answer) is read from
// its columns once the database is migrated; an update by this binary
// stores the answer it is given; an UPDATE by a writer that does not know the column
// (today's main's statement, as an older replica still running would
// send it) clears the stored answer (the migration's trigger), so the
// read follows the row, alone and in a batch.
func TestExactAnswerOfOlderRows(t *testing.T) {
	url := pgtest.URL(t)
	_, db := gooseAt(t, url, 4)
	r := answerResource("old", "old-1")
	if _, err := db.Exec(`INSERT INTO resources (`+sqlrow.ResourceCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14, $15, $16, $17, $18, $19)`, sqlrow.ResourceArgs(r)[:19]...); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, url)
	check := func(when string, storedWant bool) {
		t.Helper()
		var has bool
		if err := db.QueryRow(`SELECT answer IS NOT NULL FROM resources WHERE uid = $1`, r.UID).Scan(&has); err != nil {
			t.Fatal(err)
		}
		if has != storedWant {
			t.Fatalf("%s: an answer stored = %v, want %v", when, has, storedWant)
		}
		want := storetest.ExactOf(r, storedWant)
		if got, err := s.exactAlone(t.Context(), r.Key, r.FormRef); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: exact read %+v (%v), want %+v", when, got, err, want)
		}
		batch := []*exactCall{{ctx: t.Context(), k: r.Key, ref: r.FormRef, done: make(chan struct{})}, {ctx: t.Context(), k: r.Key, ref: r.FormRef, done: make(chan struct{})}}
		s.exactRoundTrip(batch)
		for _, c := range batch {
			<-c.done
			if !c.answered || c.err != nil || !reflect.DeepEqual(c.res, want) {
				t.Fatalf("%s: exact read in a batch %+v (%v, answered %v), want %+v", when, c.res, c.err, c.answered, want)
			}
		}
	}
	check("a row of schema 4", false)
	r.Revision, r.Status = 2, []byte(`{"phase":"Ready"}`)
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.UpdateResource(storetest.Answered(r)) }); err != nil {
		t.Fatal(err)
	}
	check("updated by this binary", true)
	r.Generation, r.Revision, r.Spec = 2, 3, []byte(`{"a":2}`)
	args := sqlrow.ResourceUpdateArgs(r)
	if _, err := db.Exec(`UPDATE resources SET form_api_version = $1, form_kind = $2,
		form_definition_version = $3, form_schema_digest = $4, package_digest = $5,
		generation = $6, revision = $7, spec = $8, spec_digest = $9, status = $10,
		native_id = $11, updated_at = $12
		WHERE uid = $13`, append(args[:12:12], args[len(args)-1])...); err != nil {
		t.Fatal(err)
	}
	check("updated by a writer without the answer column", false)
}

// Migration 00005's Down drops the trigger, its function and the answer
// column and keeps the rows; migrated up again, a row is read from its
// columns.
func TestAnswerMigrationDown(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.Answered(answerResource("down", "down-1"))
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p, db := gooseAt(t, url, 5)
	if _, err := p.DownTo(t.Context(), 4); err != nil {
		t.Fatalf("Down from 5 to 4: %v", err)
	}
	var cols, triggers, funcs, rows int
	if err := db.QueryRow(`SELECT
		(SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'resources' AND column_name = 'answer'),
		(SELECT count(*) FROM pg_trigger WHERE tgname = 'resources_answer_stale'),
		(SELECT count(*) FROM pg_proc WHERE proname = 'takoform_resources_answer_stale'),
		(SELECT count(*) FROM resources WHERE uid = $1)`, r.UID).Scan(&cols, &triggers, &funcs, &rows); err != nil {
		t.Fatal(err)
	}
	if cols != 0 || triggers != 0 || funcs != 0 || rows != 1 {
		t.Fatalf("after Down: %d answer columns, %d triggers, %d functions, %d rows; want 0, 0, 0, 1", cols, triggers, funcs, rows)
	}
	s = openTest(t, url)
	want := storetest.ExactOf(r, false) // the answer went with its column
	if got, err := s.exactAlone(t.Context(), r.Key, r.FormRef); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("exact read after Down and Up: %+v (%v), want %+v", got, err, want)
	}
}
