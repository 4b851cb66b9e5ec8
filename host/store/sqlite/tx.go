package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// tx implements store.Tx on one write transaction (*sql.Tx) or one read
// transaction of a reader (readers.go). In a write batch it is shared by
// the batch's functions one after another; done is set between them so a
// function that keeps its Tx cannot use it after returning.
type tx struct {
	// Core holds the methods both SQL stores share, over this tx as
	// their sqlcore.Executor (decision spec/decisions/0068-one-sql-core.md).
	sqlcore.Core
	// ctx is what the driver gets. user is the caller's context, checked
	// before each statement: a View's statements run under Background so
	// the driver starts no watcher goroutine per statement (repo decision
	// 0022), and
	// a cancelled request stops at its next statement.
	ctx   context.Context
	user  context.Context
	sqlc  sqlConn
	sqlTx *sql.Tx               // the write transaction; nil in a View
	db    *statements           // prepared statements; a View's are bound to its connection
	stmts [numQueries]*sql.Stmt // db's statements bound to sqlTx, made on first use
	done  bool
}

// sqlConn runs an unprepared statement: the *sql.Tx of a write batch or
// the *sql.Conn of a reader.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var _ store.Tx = (*tx)(nil)

var errTxDone = errors.New("transaction used after its function returned")

func newTx(ctx context.Context, sqlTx *sql.Tx, db *statements) *tx {
	t := &tx{ctx: ctx, user: ctx, sqlc: sqlTx, sqlTx: sqlTx, db: db}
	t.Core.X = t
	return t
}

func (t *tx) stmt(q query) *sql.Stmt {
	if t.sqlTx == nil {
		return t.db[q]
	}
	if s := t.stmts[q]; s != nil {
		return s
	}
	s := t.sqlTx.StmtContext(t.ctx, t.db[q])
	t.stmts[q] = s
	return s
}

// usable is nil while t may run a statement.
func (t *tx) usable() error {
	if t.done {
		return errTxDone
	}
	return t.user.Err()
}

func (t *tx) exec(q query, args ...any) (sql.Result, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	return t.stmt(q).ExecContext(t.ctx, args...)
}

func (t *tx) queryRow(q query, args ...any) sqlrow.Scanner {
	if err := t.usable(); err != nil {
		return errRow{err}
	}
	return t.stmt(q).QueryRowContext(t.ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (t *tx) query(q query, args ...any) (*sql.Rows, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	return t.stmt(q).QueryContext(t.ctx, args...)
}

// affected returns how many rows res changed.
func affected(res sql.Result) (int, error) {
	n, err := res.RowsAffected()
	return int(n), err
}

// isConflict reports whether err is a UNIQUE or PRIMARY KEY violation.
func isConflict(err error) bool {
	var e *sqlitedrv.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// notFound turns sql.ErrNoRows into store.ErrNotFound, wrapped with what.
func notFound(err error, what string) error { return sqlcore.NotFound(err, what) }

// --- sqlcore.Executor: the shared statements (sqlcore.Stmt) on SQLite ---

// Exec runs the shared write s and returns how many rows it changed.
func (t *tx) Exec(s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	res, err := t.exec(query(s), a.Values()...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ExecUnique is Exec, a UNIQUE or PRIMARY KEY violation wrapping
// store.ErrConflict: SQLite undoes only the refused statement, so the
// transaction stays usable.
func (t *tx) ExecUnique(s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	n, err := t.Exec(s, a)
	if isConflict(err) {
		return n, fmt.Errorf("%w (%v)", store.ErrConflict, err)
	}
	return n, err
}

// QueryRow runs the shared point read s.
func (t *tx) QueryRow(s sqlcore.Stmt, a sqlcore.Args) sqlrow.Scanner {
	return t.queryRow(query(s), a.Values()...)
}

// Query runs the shared read s and calls scan on each row.
func (t *tx) Query(s sqlcore.Stmt, scan func(sqlrow.Scanner) error, a sqlcore.Args) (rerr error) {
	rows, err := t.query(query(s), a.Values()...)
	if err != nil {
		return err
	}
	defer store.JoinCleanup(&rerr, rows.Close)
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ReadLocked is QueryRow: the one writer goroutine already keeps every
// other write transaction out until this one ends.
func (t *tx) ReadLocked(_ sqlcore.Lock, s sqlcore.Stmt, a sqlcore.Args) sqlrow.Scanner {
	return t.queryRow(query(s), a.Values()...)
}

// ReadAbsent does nothing: SQLite writes no key later than asked.
func (t *tx) ReadAbsent(sqlcore.Lock, error) {}

// ExecLocked is Exec (ReadLocked).
func (t *tx) ExecLocked(_ sqlcore.Lock, s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	return t.Exec(s, a)
}

// Lock takes nothing (ReadLocked).
func (t *tx) Lock(sqlcore.Lock) error { return nil }

// CreateResource inserts r. An existing key, UID or (tenant, native id)
// claim is an error wrapping store.ErrConflict.
func (t *tx) CreateResource(r *store.Resource) error {
	what := func() string { return fmt.Sprintf("create resource %s uid %s", sqlrow.KeyString(r.Key), r.UID) }
	if r.UID == "" {
		return fmt.Errorf("%s: no UID", what())
	}
	_, err := t.exec(query(sqlcore.InsertResource), sqlrow.ResourceArgs(r)...)
	if isConflict(err) {
		return fmt.Errorf("%s: %w (%v)", what(), store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what(), err)
	}
	return nil
}
