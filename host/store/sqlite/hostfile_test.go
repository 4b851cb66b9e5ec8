package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// A file no host wrote — empty, or another program's database — is
// refused naming it, and left byte for byte as it was, with no -wal or
// -shm beside it; a missing one is not created.
func TestOpenHostFileRefusesAFileNoHostWrote(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "notes.db")
	db, err := sql.Open("sqlite", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('hello')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{empty, foreign} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		db, err := OpenHostFile(context.Background(), path)
		if err == nil {
			db.Close()
			t.Fatalf("OpenHostFile(%s) accepted a file no host wrote", path)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a Takoform host database") {
			t.Errorf("OpenHostFile(%s): %v; want it to name the file as no host database", path, err)
		}
		after, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("OpenHostFile(%s) changed the file (%v)", path, err)
		}
		for _, side := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + side); err == nil {
				t.Errorf("OpenHostFile(%s) left %s beside it", path, side)
			}
		}
	}
	absent := filepath.Join(dir, "absent.db")
	if db, err := OpenHostFile(context.Background(), absent); err == nil {
		db.Close()
		t.Fatal("OpenHostFile of a missing file succeeded")
	}
	if _, err := os.Stat(absent); err == nil {
		t.Error("OpenHostFile created the missing file")
	}
}

// A host file whose name holds '#' or '?' (which end the path of a file:
// URI unless escaped) is opened as itself: its resources are read, and no
// file named after the part before '#' appears.
func TestOpenHostFileOpensANameWithHash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "host#1?.db")
	s := openTest(t, path, Options{})
	if err := s.Update(context.Background(), func(tx store.Tx) error { return tx.CreateResource(testResource("r", "uid-r")) }); err != nil {
		t.Fatal(err)
	}
	db, err := OpenHostFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM resources`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("read %d resources (%v), want the 1 the host wrote", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "host")); err == nil {
		t.Error("OpenHostFile created a file named after the part of the path before '#'")
	}
}

// A directory is refused saying so, and the data file in it, as the
// refusal says, opens.
func TestOpenHostFileRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "host.db")
	s := openTest(t, path, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err := OpenHostFile(context.Background(), dir); err == nil {
		db.Close()
		t.Fatal("OpenHostFile of a directory succeeded")
	} else if !strings.Contains(err.Error(), dir+" is a directory; give the data file in it") {
		t.Fatalf("OpenHostFile of a directory: %v; want it to say it is a directory", err)
	}
	db, err := OpenHostFile(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenHostFile of the data file in the directory: %v", err)
	}
	db.Close()
}
