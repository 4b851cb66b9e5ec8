package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// tx implements store.Tx on one pgx.Tx. Every database error passes
// through observe, which remembers a serialization failure (so Update
// runs fn again even if fn swallowed the error) and marks a lost
// connection with store.ErrUnavailable.
type tx struct {
	ctx      context.Context
	pg       pgx.Tx
	store    *Store
	readOnly bool
	done     bool
	retry    bool
	retryErr error
}

var _ store.Tx = (*tx)(nil)

var errTxDone = errors.New("transaction used after its function returned")

func (t *tx) observe(err error) error {
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if isRetryable(err) && !t.retry {
		t.retry, t.retryErr = true, err
	}
	if t.pg.Conn().IsClosed() && !errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return classify(err)
}

func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	if t.done {
		return pgconn.CommandTag{}, errTxDone
	}
	tag, err := t.pg.Exec(t.ctx, sql, args...)
	return tag, t.observe(err)
}

type row struct {
	t   *tx
	row pgx.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.t.observe(r.row.Scan(dest...))
}

func (t *tx) queryRow(sql string, args ...any) row {
	if t.done {
		return row{err: errTxDone}
	}
	return row{t: t, row: t.pg.QueryRow(t.ctx, sql, args...)}
}

// queryAll runs sql and scans every row with scan.
func (t *tx) queryAll(scan func(pgx.Rows) error, sql string, args ...any) error {
	if t.done {
		return errTxDone
	}
	rows, err := t.pg.Query(t.ctx, sql, args...)
	if err != nil {
		return t.observe(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return t.observe(err)
		}
	}
	return t.observe(rows.Err())
}

// lockName names what a point read locks: a namespace and the key's parts
// joined by U+001F (a collision of two names only serializes more).
func lockName(parts ...string) string { return strings.Join(parts, "\x1f") }

// readLocked runs query, a point read of at most one row, so that in a
// write transaction what it read stays as read until the transaction ends
// (decision 0011): first the transaction-scoped advisory lock lock (when
// not ""), held even when no row exists, so a concurrent writer of the
// same key waits; then query with FOR UPDATE, which waits for a concurrent
// writer of the row and reads its committed version. Both statements go
// in one round trip; under READ COMMITTED the second takes its snapshot
// after the first has the lock. In a View it is a plain read.
func (t *tx) readLocked(lock, query string, args ...any) sqlrow.Scanner {
	if t.readOnly {
		return t.queryRow(query, args...)
	}
	if t.done {
		return row{err: errTxDone}
	}
	query += " FOR UPDATE"
	if lock == "" {
		return t.queryRow(query, args...)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lock)
	b.Queue(query, args...)
	return batchRow{t: t, br: t.pg.SendBatch(t.ctx, b)}
}

// batchRow is the second result of a lock-then-read batch.
type batchRow struct {
	t  *tx
	br pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	_, err := r.br.Exec()
	if err == nil {
		err = r.br.QueryRow().Scan(dest...)
	}
	if cerr := r.br.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && cerr != nil {
		err = cerr
	}
	return r.t.observe(err)
}

// savepoint runs fn inside a savepoint, rolled back if fn fails, so an
// expected constraint violation leaves the transaction usable.
func (t *tx) savepoint(fn func() error) error {
	if t.done {
		return errTxDone
	}
	sp, err := t.pg.Begin(t.ctx)
	if err != nil {
		return t.observe(err)
	}
	if err := fn(); err != nil {
		if rerr := sp.Rollback(t.ctx); rerr != nil {
			return errors.Join(err, t.observe(rerr))
		}
		return err
	}
	return t.observe(sp.Commit(t.ctx))
}

// --- Sequences ---

// Next returns the next value of sequence: 1 on first use, then 2, 3, …
// It advances on a connection of its own, outside this transaction, as
// PostgreSQL's sequences do: concurrent Updates never conflict on a
// counter, a value is never handed out twice, and a rolled-back Update
// leaves a gap. Next fails in a View.
func (t *tx) Next(sequence string) (int64, error) {
	what := fmt.Sprintf("advance sequence %q", sequence)
	switch {
	case t.done:
		return 0, errTxDone
	case t.readOnly:
		return 0, fmt.Errorf("%s: a read-only transaction cannot advance a sequence", what)
	}
	var n int64
	err := t.store.seq.QueryRow(t.ctx, `INSERT INTO sequences (name, value) VALUES ($1, 1)
		ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1
		RETURNING value`, sequence).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, classify(err))
	}
	return n, nil
}

// --- Settings ---

// Setting returns the value of the host setting name, or an error wrapping
// store.ErrNotFound when it is unset.
func (t *tx) Setting(name string) ([]byte, error) {
	var v []byte
	if err := t.readLocked(lockName("setting", name), `SELECT value FROM settings WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, notFound(err, fmt.Sprintf("read setting %q", name))
	}
	return v, nil
}

// PutSetting stores value under name unless name is already set, and
// returns the value now stored (value, or the one set before). Two
// replicas setting one name at once store one value: the insert of the
// second waits for the first's commit and keeps its value, which the read
// after it returns.
func (t *tx) PutSetting(name string, value []byte) ([]byte, error) {
	if _, err := t.exec(`INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO NOTHING`, name, sqlrow.Blob(value)); err != nil {
		return nil, fmt.Errorf("put setting %q: %w", name, err)
	}
	return t.Setting(name)
}
