package storecopy_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlrow"
	"github.com/takoform/takoform/host/store/storecopy"
	"github.com/takoform/takoform/host/store/storetest"
)

// olderHostFile writes a host file at path as a binary of SQLite schema
// version 2 left it (before migration 00003, the stored answer): one
// resource, returned.
func olderHostFile(t *testing.T, path string) *store.Resource {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, os.DirFS("../sqlite/migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	r := &store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "old"}, UID: "old-1",
		FormRef:       form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:01"},
		PackageDigest: "sha256:02", Generation: 1, Revision: 1, Spec: []byte(`{"a":1}`), Status: []byte(`{}`)}
	if _, err := db.Exec(`INSERT INTO resources (`+sqlrow.ResourceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		?, ?, ?, ?, ?, ?, ?, ?, ?)`, sqlrow.ResourceArgs(r)[:19]...); err != nil {
		t.Fatal(err)
	}
	return r
}

func schemaVersion(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow(`SELECT MAX(version_id) FROM goose_db_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A file an older host wrote (SQLite schema 2, no stored answers) copies:
// its rows come without an answer and PostgreSQL's exact read answers
// their columns, as Tx.Resource reads them, for the host to encode.
func TestCopyFromAnOlderHostFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	r := olderHostFile(t, path)
	target := pgtest.URL(t)
	if _, err := storecopy.Copy(context.Background(), path, target); err != nil {
		t.Fatalf("Copy from a file of schema 2: %v", err)
	}
	st, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var viewed *store.Resource
	if err := st.View(context.Background(), func(tx store.Tx) error {
		var err error
		viewed, err = tx.Resource(r.Key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := storetest.ExactOf(viewed, false)
	got, err := st.ExactAnswer(context.Background(), r.Key, r.FormRef)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("exact read of the copied row: %+v (%v), want %+v", got, err, want)
	}
	if viewed.UID != r.UID || string(viewed.Spec) != string(r.Spec) {
		t.Errorf("the copied row reads %+v, want %+v", viewed, r)
	}
}

// A refused target (another program's tables) leaves an older source
// file as it was: not migrated, so the binary that wrote it still opens it
// (spec/decisions/0012-copy-sqlite-to-postgres.md).
func TestCopyRefusalLeavesTheSourceUnmigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	olderHostFile(t, path)
	target := pgtest.URL(t)
	conn, err := pgx.Connect(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `CREATE TABLE notes (x text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := storecopy.Copy(context.Background(), path, target); !errors.Is(err, storecopy.ErrTargetNotEmpty) {
		t.Fatalf("Copy into another program's database: %v, want ErrTargetNotEmpty", err)
	}
	if v := schemaVersion(t, path); v != 2 {
		t.Errorf("after the refused Copy the source is at schema version %d, want the 2 it was at", v)
	}
}

// A target that cannot be reached fails the copy before the source is
// migrated: the older file keeps its schema version.
func TestCopyToAnUnreachableTargetLeavesTheSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	olderHostFile(t, path)
	dead := "postgres://takoform:secret-pw@127.0.0.1:1/takoform?sslmode=disable&connect_timeout=5"
	if _, err := storecopy.Copy(context.Background(), path, dead); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Copy to an unreachable target: %v, want ErrUnavailable", err)
	}
	if v := schemaVersion(t, path); v != 2 {
		t.Errorf("after the failed Copy the source is at schema version %d, want the 2 it was at", v)
	}
}
