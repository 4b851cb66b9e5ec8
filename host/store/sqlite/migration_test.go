package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/storetest"
)

// fileAt is a database/sql handle on a new SQLite file at path migrated
// up to version (a file an older binary wrote), closed at cleanup, and
// the goose provider that migrated it.
func fileAt(t *testing.T, path string, version int64) (*sql.DB, *goose.Provider) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+escapePath(path)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db, p
}

// TestRetentionMigrationBackfills: a database written at schema 1 (a
// WorkerBundle naming a manifest, the manifest naming its blob, an upload
// naming another blob, holdings) gains the artifact references and usage
// migration 00002 derives, so the first sweep keeps what is referenced and
// deletes only the unreferenced blob.
func TestRetentionMigrationBackfills(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, _ := fileAt(t, path, 1)
	const (
		manifest = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
		inBundle = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		inUpload = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		loose    = "sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	)
	for _, q := range []string{
		`INSERT INTO resources VALUES ('uid-b', 'acme', 'prod', 'edge.forms.takoform.com/v1alpha1', 'WorkerBundle', 'b',
			'edge.forms.takoform.com/v1alpha1', 'WorkerBundle', '0.1.0', 'sha256:00', 'sha256:00', 1, 1,
			CAST('{"manifestDigest":"` + manifest + `"}' AS BLOB), 'sha256:00', X'7B7D', '', 1, 1)`,
		`INSERT INTO manifests VALUES ('` + manifest + `', CAST('{"modules":[{"digest":"` + inBundle + `","size":3}]}' AS BLOB))`,
		`INSERT INTO uploads VALUES ('up_1', 'acme', 'alice', CAST('{"files":[{"digest":"` + inUpload + `","size":5}]}' AS BLOB), 'sha256:ee', 1)`,
		`INSERT INTO blobs VALUES ('` + inBundle + `', 3, X'616263'), ('` + inUpload + `', 5, X'6162636465'), ('` + loose + `', 7, X'61626364656667')`,
		`INSERT INTO holdings VALUES ('acme', '` + inBundle + `'), ('acme', '` + inUpload + `'), ('acme', '` + loose + `'), ('acme', '` + manifest + `')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s := openTest(t, path, Options{})
	var usage store.Usage
	var swept int
	err := s.Update(context.Background(), func(tx store.Tx) error {
		var err error
		if usage, err = tx.Usage("acme"); err != nil {
			return err
		}
		swept, err = tx.SweepArtifacts(time.Now(), 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if usage != (store.Usage{Resources: 1, ArtifactBytes: 15}) {
		t.Errorf("backfilled usage = %+v, want 1 resource and 15 bytes", usage)
	}
	if swept != 1 {
		t.Errorf("first sweep after the migration deleted %d artifacts, want only the unreferenced blob", swept)
	}
	err = s.View(context.Background(), func(tx store.Tx) error {
		for d, want := range map[string]bool{inBundle: true, inUpload: true, loose: false} {
			if _, err := tx.BlobSize(d); (err == nil) != want {
				t.Errorf("blob %s kept = %v, want %v", d, err == nil, want)
			}
		}
		_, err := tx.Manifest(manifest)
		return err
	})
	if err != nil {
		t.Fatalf("the bundle's manifest: %v", err)
	}
}

// Migration 00003's Down drops the trigger and the answer column and
// keeps the rows; migrated up again, a row is read from its columns.
func TestAnswerMigrationDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, p := fileAt(t, path, 3)
	r := storetest.Answered(testResource("down", "uid-down"))
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(context.Background(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(context.Background(), 2); err != nil {
		t.Fatalf("Down from 3 to 2: %v", err)
	}
	var cols, triggers, rows int
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM pragma_table_info('resources') WHERE name = 'answer'),
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'resources_answer_stale'),
		(SELECT COUNT(*) FROM resources WHERE uid = ?)`, r.UID).Scan(&cols, &triggers, &rows); err != nil {
		t.Fatal(err)
	}
	if cols != 0 || triggers != 0 || rows != 1 {
		t.Fatalf("after Down: %d answer columns, %d triggers, %d rows; want 0, 0, 1", cols, triggers, rows)
	}
	s = openTest(t, path, Options{})
	want := storetest.ExactOf(r, false) // the answer went with its column
	if got, err := s.ExactAnswer(context.Background(), r.Key, r.FormRef); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("exact read after Down and Up: %+v (%v), want %+v", got, err, want)
	}
}
