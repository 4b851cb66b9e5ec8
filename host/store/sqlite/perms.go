package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// dataFileMode is the mode of the database file and of SQLite's -wal and
// -shm files beside it (SQLite gives those the main file's mode): they
// hold every tenant's state and the prepare-digest key, so only the host's
// user may read them (decision spec/decisions/0008-deployable-host.md).
const dataFileMode fs.FileMode = 0o600

// secureFiles creates the database file at path with dataFileMode when it
// does not exist (SQLite takes an empty file as a new database), and
// tightens an existing database, -wal or -shm file whose mode grants group
// or others anything to dataFileMode. Errors name the file.
func secureFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, dataFileMode)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("inspect %s: %w", p, err)
		}
		if fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, dataFileMode); err != nil {
				return fmt.Errorf("tighten %s to mode %04o (it was %04o): %w", p, dataFileMode, fi.Mode().Perm(), err)
			}
		}
	}
	return nil
}
