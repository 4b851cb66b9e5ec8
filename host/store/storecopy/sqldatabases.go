package storecopy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// SQLite databases move with the host (repo decision 0063): a SQLite host
// keeps each SQLiteDatabase as the file WORKERS/sql/<uid>.sqlite; a host
// on PostgreSQL keeps it as pages in sql_pages and its page count in
// sql_databases. copySQLDatabases stores each file's pages in the copy's
// transaction. A file left mid-transaction by a crash (a hot journal) is
// first recovered by SQLite itself, as the host would on its next open.

// copySQLDatabases copies the file of every SQLiteDatabase of the
// source that has one under workerData/sql and returns the rows written:
// sql_databases (one per file) and sql_pages (one per page).
func copySQLDatabases(ctx context.Context, stx *sql.Tx, ptx pgx.Tx, workerData string) ([]Table, error) {
	rows, err := stx.QueryContext(ctx, `SELECT uid FROM resources WHERE kind = 'SQLiteDatabase' ORDER BY uid`)
	if err != nil {
		return nil, err
	}
	var uids []string
	for rows.Next() {
		var uid string
		if err := rows.Scan(&uid); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		uids = append(uids, uid)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(uids) > 0 {
		if st, err := os.Stat(filepath.Join(workerData, "sql")); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("the host has %d SQLiteDatabases but %s holds no sql directory of their files (%v): give --worker-data the worker data directory the host kept them in; if no database was ever used, create %s empty",
				len(uids), workerData, err, filepath.Join(workerData, "sql"))
		}
	}
	dbs, pages := Table{Name: "sql_databases"}, Table{Name: "sql_pages"}
	dd, pd := sha256.New(), sha256.New()
	for _, uid := range uids {
		if uid == "" || uid == "." || uid == ".." || filepath.Base(uid) != uid {
			continue // names no file (a UID never is one of these)
		}
		path := filepath.Join(workerData, "sql", uid+".sqlite")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			var migrated bool
			if err := stx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM migration_ledger_entries WHERE database = ?)`, uid).Scan(&migrated); err != nil {
				return nil, err
			}
			if migrated {
				return nil, fmt.Errorf("SQLite database %s has migrations applied but no file at %s: give --worker-data the worker data directory the host kept it in", uid, path)
			}
			continue // never used: it starts empty on the target too
		} else if err != nil {
			return nil, err
		}
		if err := recoverFile(ctx, path); err != nil {
			return nil, fmt.Errorf("SQLite database %s (%s): %w", uid, path, err)
		}
		n, err := copyPages(ctx, ptx, uid, path, pd)
		if err != nil {
			return nil, fmt.Errorf("SQLite database %s (%s): %w", uid, path, err)
		}
		if _, err := ptx.Exec(ctx, `INSERT INTO sql_databases (uid, pages, commits, stored_at) VALUES ($1, $2, 1, $3)`, uid, n, time.Now().UnixMilli()); err != nil {
			return nil, fmt.Errorf("SQLite database %s: %w", uid, err)
		}
		dd.Write(fmt.Appendf(nil, "%s %d\n", uid, n))
		dbs.Rows++
		pages.Rows += n
	}
	dbs.Digest = "sha256:" + hex.EncodeToString(dd.Sum(nil))
	pages.Digest = "sha256:" + hex.EncodeToString(pd.Sum(nil))
	return []Table{dbs, pages}, nil
}

// recoverFile opens path with SQLite, which rolls back a transaction a
// crash left in its journal, and checks its page size and that it is
// whole.
func recoverFile(ctx context.Context, path string) (err error) {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer store.JoinCleanup(&err, db.Close)
	var size int64
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return err
	}
	if size != store.SQLPageBytes {
		return fmt.Errorf("its pages are %d bytes; a host on PostgreSQL keeps %d-byte pages (run VACUUM with PRAGMA page_size=%d on it first)", size, store.SQLPageBytes, store.SQLPageBytes)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return err
	}
	if check != "ok" {
		return fmt.Errorf("SQLite's quick_check says %q; repair or remove it first", check)
	}
	return nil
}

// copyPages stores path's pages as uid's and returns how many.
func copyPages(ctx context.Context, ptx pgx.Tx, uid, path string, digest hash.Hash) (_ int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer store.JoinCleanup(&err, f.Close)
	buf := make([]byte, store.SQLPageBytes)
	var n int64
	for {
		if _, err := io.ReadFull(f, buf); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("read page %d: %w (the file is not whole pages)", n+1, err)
		}
		n++
		if _, err := ptx.Exec(ctx, `INSERT INTO sql_pages (uid, pgno, data) VALUES ($1, $2, $3)`, uid, n, buf); err != nil {
			return n, err
		}
		digest.Write(fmt.Appendf(nil, "%s %d ", uid, n))
		digest.Write(buf)
	}
}
