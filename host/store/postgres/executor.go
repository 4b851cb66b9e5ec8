package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// sqlcore.Executor: the shared statements (sqlcore.Stmt) on PostgreSQL,
// each in the round trips it took before they were shared (decision
// spec/decisions/0068-one-sql-core.md): one per statement, a locked read
// or write with its advisory lock in one.

func pgText(s sqlcore.Stmt) string { return sqlcore.Text(sqlcore.Postgres, s) }

// Exec runs the shared write s and returns how many rows it changed.
func (t *tx) Exec(s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	tag, err := t.exec(pgText(s), a.Values()...)
	return tag.RowsAffected(), err
}

// ExecUnique runs s inside a savepoint, rolled back when it fails, so a
// unique violation (an error wrapping store.ErrConflict) leaves the
// transaction usable.
func (t *tx) ExecUnique(s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	var n int64
	err := t.savepoint(func() error {
		var err error
		n, err = t.Exec(s, a)
		return err
	})
	if isConflict(err) {
		return n, fmt.Errorf("%w (%v)", store.ErrConflict, err)
	}
	return n, err
}

// QueryRow runs the shared point read s.
func (t *tx) QueryRow(s sqlcore.Stmt, a sqlcore.Args) sqlrow.Scanner {
	return t.queryRow(pgText(s), a.Values()...)
}

// Query runs the shared read s and calls scan on each row.
func (t *tx) Query(s sqlcore.Stmt, scan func(sqlrow.Scanner) error, a sqlcore.Args) error {
	return t.queryAll(func(rows pgx.Rows) error { return scan(rows) }, pgText(s), a.Values()...)
}

// ReadLocked is readLocked.
func (t *tx) ReadLocked(lock sqlcore.Lock, s sqlcore.Stmt, a sqlcore.Args) sqlrow.Scanner {
	return t.readLocked(lock, s, a.Values()...)
}

// ReadAbsent records that a locked read in a write transaction found no
// row at lock's key (noteAbsent).
func (t *tx) ReadAbsent(lock sqlcore.Lock, err error) {
	if t.readOnly || lock.IsZero() || !errors.Is(err, pgx.ErrNoRows) && !errors.Is(err, store.ErrNotFound) {
		return
	}
	t.noteAbsent(lock.Name(), err)
}

// ExecLocked runs the shared write s after taking lock, in one round
// trip; the key is then no longer one this transaction read absent.
func (t *tx) ExecLocked(lock sqlcore.Lock, s sqlcore.Stmt, a sqlcore.Args) (int64, error) {
	name := lock.Name()
	t.forget(name)
	tag, err := t.execLocked(name, pgText(s), a.Values()...)
	return tag.RowsAffected(), err
}

// Lock takes lock's advisory lock until the transaction ends (a View takes
// none: it writes nothing another transaction could race).
func (t *tx) Lock(lock sqlcore.Lock) error {
	if t.readOnly {
		return nil
	}
	_, err := t.exec(qAdvisoryLock, lock.Name())
	return err
}
