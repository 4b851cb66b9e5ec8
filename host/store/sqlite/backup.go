package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database file at src to out,
// safely while a host serves src: SQLite's VACUUM INTO reads one snapshot
// in a read transaction (concurrent commits go on; they are in the WAL,
// which copying the file alone would miss) and writes a compact database
// without a WAL. The copy is written to out+".partial", checked with
// PRAGMA quick_check, fsynced, created 0600 and renamed to out, so out is
// either absent or complete. Errors: src missing or not a database, out
// already existing (never overwritten), or a failed write.
func Backup(ctx context.Context, src, out string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: the data file %s: %w", src, err)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("backup: %s already exists; choose a new file (a backup never overwrites)", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %s: %w", out, err)
	}
	partial := out + ".partial"
	_ = os.Remove(partial) // a leftover of an interrupted backup
	q := "file:" + escapePath(src) + "?mode=ro&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", q)
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'goose_db_version'`).Scan(&tables); err != nil {
		return fmt.Errorf("backup: %s is not a SQLite database: %w", src, err)
	}
	if tables == 0 {
		return fmt.Errorf("backup: %s is not a Takoform host database (it has no schema version table)", src)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, partial); err != nil {
		_ = os.Remove(partial)
		return fmt.Errorf("backup: copy %s: %w", src, err)
	}
	if err := finishBackup(ctx, partial, out); err != nil {
		_ = os.Remove(partial)
		return err
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
	err = db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check)
	db.Close()
	if err != nil || check != "ok" {
		return fmt.Errorf("backup: the copy fails its integrity check (%q, %v)", check, err)
	}
	f, err := os.Open(partial)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("backup: fsync the copy: %w", err)
	}
	if err := os.Rename(partial, out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if d, err := os.Open(filepath.Dir(out)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
