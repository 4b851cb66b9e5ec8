package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/takoform/takoform/wire"
)

// LedgerTable is the migration ledger inside each SQLiteDatabase's own
// file (spec/runtime-v1.md §9.3): one row per applied migration file, in
// order. Worker SQL never reads or writes it (LedgerTablePrefix).
const LedgerTable = LedgerTablePrefix + "_migrations"

// MigrationFile is one file of a SQLiteMigrationSet, in the set's order:
// its path and digest as the MigrationBundle's manifest lists them, and
// its SQL text (one or more statements, no transaction control).
type MigrationFile struct {
	Path   string
	Digest string
	SQL    string
}

// LedgerEntry is one applied migration file: its path, digest and when
// this host applied it (UTC).
type LedgerEntry struct {
	Path      string
	Digest    string
	AppliedAt time.Time
}

// Ledger reads the in-file migration ledger of the SQLiteDatabase with
// uid, in order (none for a database never migrated). After a crash it
// is the truth the host store's ledger copy is repaired from
// (spec/runtime-v1.md §9.3). Errors are *Error (backend_unavailable).
func (g *Gateway) Ledger(ctx context.Context, uid string) ([]LedgerEntry, error) {
	var out []LedgerEntry
	err := g.sql.onOwner(ctx, uid, func() (err error) {
		out, err = g.ledgerHere(ctx, uid)
		return err
	}, func(holder string) (err error) {
		out, err = g.sql.owner.forwardLedger(ctx, holder, uid, "ledger", nil)
		return err
	})
	return out, err
}

// ledgerHere reads uid's ledger on this replica (*notOwner when another
// owns it).
func (g *Gateway) ledgerHere(ctx context.Context, uid string) ([]LedgerEntry, error) {
	var out []LedgerEntry
	var ferr error
	err := g.sql.with(ctx, uid, func(e *engine, pol *policy) {
		pol.reset(authHost)
		out, ferr = readLedger(e)
	})
	if err != nil {
		return nil, err
	}
	if ferr != nil {
		return nil, unavailable(ferr)
	}
	return out, nil
}

// ApplyMigrations brings the SQLiteDatabase with uid to files, the whole
// ordered list of its SQLiteMigrationSet (spec/lane-v1beta1.md §6.7,
// spec/runtime-v1.md §9.3). The in-file ledger must be an exact prefix
// of files (path and digest at each position), else a *wire.Error
// migration_required (409) and nothing runs. Then each unapplied file,
// in order, runs in ONE SQLite transaction with the append of its ledger
// row: a failing file leaves neither its effects nor its entry, the files
// before it stay applied, and the next call resumes at that file. It
// returns the in-file ledger as it stands after the call (what committed,
// also when a file failed), so the caller can make the host store's copy
// equal to it (after a crash between the two commits the in-file ledger
// wins, spec/runtime-v1.md §9.3). A failing file is a *wire.Error
// invalid_argument with host code migration_failed naming the file's
// path and SQLite's message; a fault of the host's storage is an *Error
// (backend_unavailable or busy).
//
// A file's statements run under the worker policy less the v1beta1
// schema rule: schema changes are what it is for, while transaction
// control, ATTACH, writing PRAGMAs, load_extension and the ledger table
// are refused. The control plane calls it (host.Config.Migrations: the
// commit of a SQLiteMigrationApplication, repo decision 0057) for a
// SQLiteDatabase of edge.forms.takoform.com/v1beta1,
// the only family with migrations: it reads no store, so the caller
// vouches for uid, and may call it inside its own store transaction. It
// is safe beside serving: calls on one database run one after another.
// The database's size limit holds (a file that fills it fails
// migration_failed); a file has no time limit.
func (g *Gateway) ApplyMigrations(ctx context.Context, uid string, files []MigrationFile) ([]LedgerEntry, error) {
	if g.noSQL != "" {
		return nil, wire.Errorf(wire.UnsupportedCapability, "database %s was not migrated: %s", uid, g.noSQL)
	}
	var ledger []LedgerEntry
	err := g.sql.onOwner(ctx, uid, func() (err error) {
		ledger, err = g.applyHere(ctx, uid, files)
		return err
	}, func(holder string) error {
		body, err := json.Marshal(files)
		if err != nil {
			return err
		}
		ledger, err = g.sql.owner.forwardLedger(ctx, holder, uid, "migrate", body)
		return err
	})
	return ledger, err
}

// applyHere migrates uid on this replica (*notOwner when another owns
// it).
func (g *Gateway) applyHere(ctx context.Context, uid string, files []MigrationFile) ([]LedgerEntry, error) {
	var ledger []LedgerEntry
	var ferr error
	err := g.sql.with(ctx, uid, func(e *engine, pol *policy) {
		ledger, ferr = g.migrate(e, pol, files)
	})
	if err != nil {
		return nil, err
	}
	return ledger, ferr
}

func (g *Gateway) migrate(e *engine, pol *policy, files []MigrationFile) ([]LedgerEntry, error) {
	pol.reset(authHost)
	have, err := readLedger(e)
	if err != nil {
		return nil, unavailable(err)
	}
	if len(have) > len(files) {
		return have, wire.Errorf(wire.MigrationRequired, "the database's ledger holds %d applied files but the migration set lists %d; a set only grows by appended files: apply a set that extends %s", len(have), len(files), have[len(have)-1].Path)
	}
	for i, h := range have {
		if h.Path != files[i].Path || h.Digest != files[i].Digest {
			return have, wire.Errorf(wire.MigrationRequired, "migration %d was applied as %s (%s) but the set lists %s (%s) there; applied files never change: append a new file instead", i, h.Path, h.Digest, files[i].Path, files[i].Digest)
		}
	}
	for i := len(have); i < len(files); i++ {
		entry := LedgerEntry{Path: files[i].Path, Digest: files[i].Digest, AppliedAt: g.now().UTC()}
		if err := migrateOne(e, pol, i, files[i], entry.AppliedAt); err != nil {
			return have, err
		}
		have = append(have, entry)
	}
	return have, nil
}

// migrateOne runs one file and appends its ledger row at position in
// one transaction.
func migrateOne(e *engine, pol *policy, position int, f MigrationFile, at time.Time) error {
	failed := func(format string, a ...any) error {
		return wire.Errorf(wire.InvalidArgument, "migration %s failed, nothing of it was applied: %s; fix the file in a new migration set", f.Path, fmt.Sprintf(format, a...)).WithHostCode("migration_failed")
	}
	host := func(text string) error {
		pol.reset(authHost)
		return e.exec(text)
	}
	if err := host("BEGIN IMMEDIATE"); err != nil {
		return engineError(err, false)
	}
	rollback := func(cause error) error {
		if !e.autocommit() {
			if err := host("ROLLBACK"); err != nil {
				return unavailable(fmt.Errorf("roll back migration %s: %w", f.Path, err))
			}
		}
		return cause
	}
	if err := host(ledgerSchema); err != nil {
		return rollback(engineError(err, false))
	}
	if strings.IndexByte(f.SQL, 0) >= 0 {
		return rollback(failed("the file holds a NUL character"))
	}
	// statementFailed is a statement's failure: the file's fault
	// (migration_failed), or a fault of the host's storage.
	statementFailed := func(n int, err error) error {
		if se, ok := err.(*sqliteError); ok && pol.denied == "" {
			switch se.code {
			case sqlite3.SQLITE_FULL:
				return rollback(failed("statement %d: the database reached this host's size limit per SQLite database (or the host's disk is full)", n))
			case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
				return rollback(unavailable(err))
			}
		}
		return rollback(failed("statement %d: %s", n, denialOr(pol, err).Message))
	}
	rest := f.SQL
	for n := 1; ; n++ {
		pol.reset(authExecute) // the worker policy; fixedSchema stays false here
		pol.fixedSchema = false
		stmt, tail, err := e.prepare(rest)
		if err != nil {
			return statementFailed(n, err)
		}
		if stmt == 0 {
			break
		}
		for {
			more, err := e.step(stmt)
			if err != nil {
				e.finalize(stmt)
				return statementFailed(n, err)
			}
			if !more {
				break
			}
		}
		e.finalize(stmt)
		if e.autocommit() {
			return failed("statement %d ended the migration's transaction", n)
		}
		rest = rest[tail:]
	}
	if err := appendLedger(e, pol, position, f, at); err != nil {
		return rollback(engineError(err, false))
	}
	if err := host("COMMIT"); err != nil {
		return rollback(engineError(err, false))
	}
	return nil
}

const ledgerSchema = `CREATE TABLE IF NOT EXISTS ` + LedgerTable + ` (
  position INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  digest TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`

// appendLedger inserts the ledger row of f at position.
func appendLedger(e *engine, pol *policy, position int, f MigrationFile, at time.Time) error {
	pol.reset(authHost)
	stmt, _, err := e.prepare(`INSERT INTO ` + LedgerTable + ` (position, path, digest, applied_at) VALUES (?1, ?2, ?3, ?4)`)
	if err != nil {
		return err
	}
	defer e.finalize(stmt)
	for i, rc := range []int32{
		e.bindInt64(stmt, 1, int64(position)),
		e.bindBytes(stmt, 2, []byte(f.Path), true),
		e.bindBytes(stmt, 3, []byte(f.Digest), true),
		e.bindBytes(stmt, 4, []byte(at.Format(time.RFC3339Nano)), true),
	} {
		if rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("bind ledger column %d: %w", i+1, e.err(rc))
		}
	}
	_, err = e.step(stmt)
	return err
}

// readLedger reads the ledger rows in order (none without the table).
func readLedger(e *engine) ([]LedgerEntry, error) {
	stmt, _, err := e.prepare(`SELECT path, digest, applied_at FROM ` + LedgerTable + ` ORDER BY position`)
	if err != nil {
		if se, ok := err.(*sqliteError); ok && se.code == sqlite3.SQLITE_ERROR && strings.Contains(se.msg, "no such table") {
			return nil, nil
		}
		return nil, err
	}
	defer e.finalize(stmt)
	var out []LedgerEntry
	for {
		more, err := e.step(stmt)
		if err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
		at, err := time.Parse(time.RFC3339Nano, string(e.columnBytes(stmt, 2, true)))
		if err != nil {
			return nil, fmt.Errorf("ledger row %d: applied_at: %w", len(out), err)
		}
		out = append(out, LedgerEntry{Path: string(e.columnBytes(stmt, 0, true)), Digest: string(e.columnBytes(stmt, 1, true)), AppliedAt: at})
	}
}
