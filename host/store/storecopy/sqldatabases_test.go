package storecopy_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/host/store/storecopy"
)

// TestCopyCarriesSQLiteDatabases: the file of each SQLiteDatabase under
// the worker data directory becomes its pages on the target (repo
// decision 0063), which rebuild a database byte-identical to the file
// with its rows; a SQLiteDatabase with no file copies no pages; the
// result counts both; a worker data directory with no sql/ in it is
// refused while the host has SQLiteDatabases.
func TestCopyCarriesSQLiteDatabases(t *testing.T) {
	target := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "host.db")
	src, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Update(context.Background(), func(tx store.Tx) error {
		for _, uid := range []string{"uid-sql", "uid-unused"} {
			if err := tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "edge.forms.takoform.com/v1beta1", Kind: "SQLiteDatabase", Name: uid},
				UID: uid, Generation: 1, Revision: 1, Spec: []byte(`{}`), Status: []byte(`{}`)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(path+".workers", "sql", "uid-sql.sqlite")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=page_size(4096)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if _, err := db.Exec(`INSERT INTO notes (body) VALUES (?)`, fmt.Sprint(strings.Repeat("n", 100), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	// A worker data directory that is not the host's is refused, naming
	// the flag, and leaves the target empty (the copy below needs it so).
	wrong := filepath.Join(t.TempDir(), "elsewhere")
	if _, err := storecopy.CopyWithWorkerData(context.Background(), path, wrong, target); err == nil || !strings.Contains(err.Error(), "give --worker-data the worker data directory") {
		t.Fatalf("a copy naming a directory with no sql/ in it: %v; want the refusal naming --worker-data", err)
	}
	tables, err := storecopy.Copy(context.Background(), path, target)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	rows := map[string]int64{}
	for _, tb := range tables {
		rows[tb.Name] = tb.Rows
	}
	if rows["sql_databases"] != 1 || rows["sql_pages"] != int64(len(want)/store.SQLPageBytes) {
		t.Fatalf("copied %d databases and %d pages; want 1 and the file's %d", rows["sql_databases"], rows["sql_pages"], len(want)/store.SQLPageBytes)
	}
	dst, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	got := make([]byte, 0, len(want))
	n, err := dst.ReadSQLPages(context.Background(), "uid-sql", func(_ int64, data []byte) error {
		got = append(got, data...)
		return nil
	})
	if err != nil || n != int64(len(want)/store.SQLPageBytes) || string(got) != string(want) {
		t.Fatalf("the target's pages: %d (%v), %d bytes; want the file's %d bytes byte-identical", n, err, len(got), len(want))
	}
	if n, err := dst.ReadSQLPages(context.Background(), "uid-unused", func(int64, []byte) error { return nil }); err != nil || n != 0 {
		t.Fatalf("a database with no file: %d pages, %v; want none", n, err)
	}
}
