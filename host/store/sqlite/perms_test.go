package sqlite

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func modeOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestDataFilesAreOwnerOnly: a new database, its WAL and shared-memory
// files are 0600 in a new 0700 directory, whatever the umask lets through.
func TestDataFilesAreOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "host.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := modeOf(t, dir); m != 0o700 {
		t.Errorf("directory mode %04o, want 0700", m)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if m := modeOf(t, p); m != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), m)
		}
	}
}

// TestExistingDataFilesAreTightened: files left world-readable by an
// earlier version are 0600 after the next start.
func TestExistingDataFilesAreTightened(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path+"-wal", 0o664); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{path, path + "-wal"} {
		if m := modeOf(t, p); m != 0o600 {
			t.Errorf("%s: mode %04o after restart, want 0600", filepath.Base(p), m)
		}
	}
}
