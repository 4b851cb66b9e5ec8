package sqlwal_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/takoform/takoform/host/runtime/sqlwal"
)

const pageSize = 4096

// walDB is a real SQLite database in WAL mode with no automatic
// checkpoint, on one connection, as the gateway's owner runs it.
func walDB(t *testing.T, path string) *sql.Conn {
	t.Helper()
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		fmt.Sprintf("?_pragma=page_size(%d)&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_pragma=cache_size(4)", pageSize)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func exec(t *testing.T, c *sql.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// apply writes c's pages into the file at path and sets its size, as a
// replica rebuilding a database does.
func apply(t *testing.T, path string, c sqlwal.Commit) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n, d := range c.Pages {
		if _, err := f.WriteAt(d, (n-1)*pageSize); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(c.Count * pageSize); err != nil {
		t.Fatal(err)
	}
}

// TestCommittedPagesRebuildTheFile: after each round of transactions —
// committed ones, one rolled back after spilling pages into the log, a
// schema change, a delete that shrinks the file under VACUUM — the pages
// Read finds, applied to a copy built from the earlier rounds, make that
// copy byte-identical to the database file once the log is checkpointed.
func TestCommittedPagesRebuildTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db.sqlite")
	copyPath := filepath.Join(dir, "copy.sqlite")
	c := walDB(t, path)
	blob := strings.Repeat("x", 3000)
	rounds := []struct {
		name string
		run  func()
	}{
		{"create and fill", func() {
			exec(t, c, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`)
			for i := range 50 {
				exec(t, c, `INSERT INTO t (v) VALUES (?)`, fmt.Sprint(blob, i))
			}
		}},
		{"rolled back after spilling, then a small commit", func() {
			exec(t, c, `BEGIN`)
			for i := range 200 {
				exec(t, c, `INSERT INTO t (v) VALUES (?)`, fmt.Sprint(blob, "r", i))
			}
			exec(t, c, `ROLLBACK`)
			exec(t, c, `UPDATE t SET v = 'small' WHERE id = 3`)
		}},
		{"schema change and index", func() {
			exec(t, c, `CREATE TABLE u (k TEXT PRIMARY KEY, n INTEGER)`)
			exec(t, c, `CREATE INDEX t_v ON t (v)`)
			exec(t, c, `INSERT INTO u VALUES ('a', 1), ('b', 2)`)
		}},
		{"shrink", func() {
			exec(t, c, `DELETE FROM t WHERE id > 5`)
			exec(t, c, `VACUUM`)
		}},
	}
	for _, r := range rounds {
		r.run()
		got, err := sqlwal.Read(path+"-wal", pageSize)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if got.Frames == 0 {
			t.Fatalf("%s: no committed frames read", r.name)
		}
		apply(t, copyPath, got)
		exec(t, c, `PRAGMA wal_checkpoint(TRUNCATE)`)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, have) {
			t.Fatalf("%s: the copy (%d bytes) differs from the checkpointed file (%d bytes)", r.name, len(have), len(want))
		}
		if after, err := sqlwal.Read(path+"-wal", pageSize); err != nil || after.Frames != 0 {
			t.Fatalf("%s: after a TRUNCATE checkpoint the log reads %d frames, %v; want none", r.name, after.Frames, err)
		}
	}
}

// TestRolledBackFramesAreNotCommitted: a transaction that spilled pages
// into the log and rolled back commits nothing.
func TestRolledBackFramesAreNotCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	c := walDB(t, path)
	exec(t, c, `CREATE TABLE t (v TEXT)`)
	exec(t, c, `PRAGMA wal_checkpoint(TRUNCATE)`)
	exec(t, c, `BEGIN`)
	for i := range 100 {
		exec(t, c, `INSERT INTO t VALUES (?)`, strings.Repeat("y", 2000)+fmt.Sprint(i))
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("the open transaction spilled nothing into the log (%v): the test proves nothing", err)
	}
	exec(t, c, `ROLLBACK`)
	got, err := sqlwal.Read(path+"-wal", pageSize)
	if err != nil {
		t.Fatal(err)
	}
	if got.Frames != 0 || len(got.Pages) != 0 {
		t.Fatalf("a rolled-back transaction read as %d committed frames, %d pages", got.Frames, len(got.Pages))
	}
}

// TestNotALog: a file that is not a WAL is refused, a missing one is empty.
func TestNotALog(t *testing.T) {
	dir := t.TempDir()
	if c, err := sqlwal.Read(filepath.Join(dir, "absent"), pageSize); err != nil || c.Frames != 0 {
		t.Fatalf("missing log: %+v, %v", c, err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, bytes.Repeat([]byte{7}, 64), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlwal.Read(bad, pageSize); err == nil || !strings.Contains(err.Error(), "not a SQLite WAL") {
		t.Fatalf("a non-log read as %v", err)
	}
}
