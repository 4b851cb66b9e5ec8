package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/takoform/takoform/host/store"
)

// Backup writes a consistent copy of the database file at src to out,
// safely while a host serves src: SQLite's VACUUM INTO reads one snapshot
// in a read transaction (concurrent commits go on; they are in the WAL,
// which copying the file alone would miss) and writes a compact database
// without a WAL. The copy is written to out+".partial", checked with
// PRAGMA quick_check, fsynced, created 0600 and renamed to out, so out is
// either absent or complete. Errors: src missing or not a database, out
// already existing (never overwritten), or a failed write.
func Backup(ctx context.Context, src, out string) (err error) {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("backup: %s already exists; choose a new file (a backup never overwrites)", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %s: %w", out, err)
	}
	partial := out + ".partial"
	if err := removePartial(partial); err != nil { // a leftover of an interrupted backup
		return fmt.Errorf("backup: %w", err)
	}
	db, err := OpenHostFile(ctx, src)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer store.JoinCleanup(&err, db.Close)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, partial); err != nil {
		return errors.Join(fmt.Errorf("backup: copy %s: %w", src, err), removePartial(partial))
	}
	if err := finishBackup(ctx, partial, out); err != nil {
		return errors.Join(err, removePartial(partial))
	}
	return nil
}

// finishBackup checks, tightens, fsyncs and renames the written copy.
func finishBackup(ctx context.Context, partial, out string) error {
	if err := os.Chmod(partial, 0o600); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(partial)+"?mode=ro")
	if err != nil {
		return fmt.Errorf("backup: check the copy: %w", err)
	}
	var check string
	err = errors.Join(db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check), db.Close())
	if err != nil || check != "ok" {
		return fmt.Errorf("backup: the copy fails its integrity check (%q, %v)", check, err)
	}
	f, err := os.Open(partial)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	err = errors.Join(f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("backup: fsync the copy: %w", err)
	}
	if err := os.Rename(partial, out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// The rename is durable once the directory is fsynced.
	d, err := os.Open(filepath.Dir(out))
	if err == nil {
		err = errors.Join(d.Sync(), d.Close())
	}
	if err != nil {
		return fmt.Errorf("backup: %s is written but its directory could not be fsynced: %w", out, err)
	}
	return nil
}

// removePartial removes a partial copy; one never written is no error.
func removePartial(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
