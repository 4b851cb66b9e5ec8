package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// tx implements store.Tx. Its transaction begins lazily: the BEGIN goes
// in one round trip with the first statement (pgx.Batch.BeginTx). A
// View whose kind has read one statement before runs its first read
// alone, outside a transaction (single): one statement reads one
// snapshot. Should it send another, the transaction begins with the
// first read sent again, and goes on only if that read returns what it
// returned alone; otherwise fn runs again in the transaction (escalate)
// (decision spec/decisions/0020-postgres-round-trips.md). A write of a
// key the transaction holds and read absent is sent with the next
// statement or the COMMIT (pending, decision
// spec/decisions/0029-one-read-per-mutation.md). A key state taken for
// granted (KeyStateExpectFree) is verified by statements sent at the
// front of the next round trip, the COMMIT's at the latest (expect,
// decision spec/decisions/0048-postgres-create-one-round-trip.md). Every database error
// passes through observe, which remembers a serialization failure (so
// Update runs fn again even if fn swallowed the error) and marks a lost
// connection with store.ErrUnavailable.
type tx struct {
	// Core holds the methods both SQL stores share, over this tx as
	// their sqlcore.Executor (executor.go; decision
	// spec/decisions/0068-one-sql-core.md).
	sqlcore.Core
	ctx      context.Context
	store    *Store
	opts     pgx.TxOptions
	conn     *pgxpool.Conn // nil until the first statement began the transaction on it
	readOnly bool
	done     bool
	retry    bool
	retryErr error
	single   bool
	escalate bool
	sent     int   // round trips sent
	stale    error // the first round trip found its pooled connection dead
	// first is the read a single View sent alone and sum what it
	// returned (sumRows), to check against the snapshot.
	first *pgx.QueuedQuery
	sum   uint64
	// absent holds the lock names of keys this write transaction locked
	// and read absent, which nobody else can write until it ends; pending
	// the writes of such keys not sent yet, and failed the failure of one
	// sent, which ends the transaction (it never commits).
	absent  map[string]bool
	pending []pendingWrite
	failed  error
	// expect holds the statements verifying a state KeyStateExpectFree
	// answered without reading (the key's locks, then qExpectFree), sent
	// at the front of the next round trip and kept until they pass;
	// exact says KeyStateExpectFree reads instead (fn runs again after an
	// expectation failed); wrong says a check failed, unverified that fn
	// returned an error before its check ran: either way Update runs fn
	// again exact (decision spec/decisions/0048-postgres-create-one-round-trip.md).
	expect     []*pgx.QueuedQuery
	committing bool
	exact      bool
	wrong      bool
	unverified bool
}

// pendingWrite is a write sent with the transaction's next statement or
// its COMMIT: one row inserted, or the transaction fails with what.
type pendingWrite struct {
	what string
	sql  string
	args []any
}

var _ store.Tx = (*tx)(nil)

var (
	errTxDone      = errors.New("transaction used after its function returned")
	errEscalate    = errors.New("the View's first read changed before its transaction began; the View runs again")
	errExpectation = errors.New("the state the transaction took for granted was not verified; the Update runs again reading it")
)

func (t *tx) observe(err error) error {
	if err == nil || errors.Is(err, pgx.ErrNoRows) || errors.Is(err, errEscalate) || errors.Is(err, errTxDone) {
		return err
	}
	if isRetryable(err) && !t.retry {
		t.retry, t.retryErr = true, err
	}
	if t.sent == 1 && !t.committing { // before lostConn: a dead pooled connection is closed by then
		t.noteFirst(err)
	}
	if t.lostConn() && !errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return classify(err)
}

// lostConn reports that the transaction's connection is closed.
func (t *tx) lostConn() bool {
	return t.conn != nil && t.conn.Conn().IsClosed()
}

// noteFirst marks a failure of the first round trip on a pooled
// connection that turned out dead (a restarted or unreachable server
// leaves the pool's idle connections broken): nothing of fn reached a
// transaction that could commit, so run starts fn again on another
// connection. A failure to dial a new connection is not stale.
func (t *tx) noteFirst(err error) {
	var dial *pgconn.ConnectError
	if isUnavailable(err) && !errors.As(err, &dial) && t.ctx.Err() == nil {
		t.stale = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
}

// send sends b's statements in one round trip and returns their results
// (Close them before the next send): alone when b is a single View's
// first read (alone is then true), otherwise in the transaction, begun
// with them when it is not yet.
func (t *tx) send(b *pgx.Batch, write bool) (_ pgx.BatchResults, alone bool) {
	switch {
	case t.done:
		return pgx.FailedBatchResults(b, errTxDone), false
	case t.failed != nil:
		return pgx.FailedBatchResults(b, t.failed), false
	}
	t.sent++
	if t.conn != nil {
		br := t.conn.SendBatch(t.ctx, t.withPrefix(b))
		if err := t.readPrefix(br); err != nil {
			return pgx.FailedBatchResults(b, errors.Join(err, br.Close())), false
		}
		return br, false
	}
	if t.single && t.sent == 1 && !write && b.Len() == 1 {
		t.first = b.QueuedQueries[0]
		return t.store.pool.SendBatch(t.ctx, b), true
	}
	conn, err := t.store.pool.Acquire(t.ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err), false
	}
	t.conn = conn
	begin := &pgx.Batch{}
	begin.Queue(beginSQL(t.opts))
	if t.first != nil { // queued anew: pgx binds a queued query to one connection's statement
		begin.Queue(t.first.SQL, t.first.Arguments...)
	}
	begin.QueuedQueries = append(begin.QueuedQueries, t.withPrefix(b).QueuedQueries...)
	br := conn.SendBatch(t.ctx, begin)
	if _, err := br.Exec(); err != nil { // BEGIN; a failure repeats in every result after it
		return br, false
	}
	if t.first != nil {
		rows, err := br.Query()
		sum, err := sumRows(rows, err, nil)
		if err == nil && sum != t.sum {
			t.escalate = true
			return pgx.FailedBatchResults(b, errors.Join(errEscalate, br.Close())), false
		}
	}
	if err := t.readPrefix(br); err != nil {
		return pgx.FailedBatchResults(b, errors.Join(err, br.Close())), false
	}
	return br, false
}

// beginSQL begins a transaction with opts' isolation level and access mode.
func beginSQL(opts pgx.TxOptions) string {
	s := "BEGIN ISOLATION LEVEL " + string(opts.IsoLevel)
	if opts.AccessMode != "" {
		s += " " + string(opts.AccessMode)
	}
	return s
}

// withPrefix is b after the statements verifying what the transaction
// took for granted and the pending writes, which it takes.
func (t *tx) withPrefix(b *pgx.Batch) *pgx.Batch {
	if len(t.expect) == 0 && len(t.pending) == 0 {
		return b
	}
	all := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery(nil), t.expect...)}
	for _, w := range t.pending {
		all.Queue(w.sql, w.args...)
	}
	all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	return all
}

// readPrefix reads the results of what withPrefix put first in br: the
// verifying statements, whose failure fails the transaction (wrong when
// the state was not as taken for granted), then the pending writes.
func (t *tx) readPrefix(br pgx.BatchResults) error {
	for range t.expect {
		if _, err := br.Exec(); err != nil {
			t.wrong = pgCode(err) == codeExpectation
			t.failed = fmt.Errorf("verify the key state taken for granted: %w", t.observe(err))
			t.pending = nil
			return t.failed
		}
	}
	t.expect = nil
	return t.readPending(br)
}

// readPending reads the results of the pending writes withPrefix put in
// br; the first failure (a unique key taken is store.ErrConflict) fails
// the transaction.
func (t *tx) readPending(br pgx.BatchResults) error {
	pending := t.pending
	t.pending = nil
	for _, w := range pending {
		tag, err := br.Exec()
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("wrote %d rows, not 1", tag.RowsAffected())
		}
		if err != nil {
			if isConflict(err) {
				err = fmt.Errorf("%w: %w", store.ErrConflict, err)
			}
			t.failed = fmt.Errorf("%s: %w", w.what, t.observe(err))
			return t.failed
		}
	}
	return nil
}

// commit sends what is left to verify, the pending writes and COMMIT in
// one round trip, with the BEGIN when nothing was sent before.
// A failure of this round trip is never stale (noteFirst), even when it
// is the first: the server may have committed before the connection
// broke, so the outcome is unknown.
func (t *tx) commit(ctx context.Context) error {
	t.ctx, t.committing = ctx, true
	br, _ := t.send(one("COMMIT"), true)
	tag, err := br.Exec()
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return t.observe(err)
}

// end rolls back what the transaction left open (nothing after COMMIT)
// and returns its connection to the pool, which closes one left in a
// transaction.
func (t *tx) end(ctx context.Context) error {
	c := t.conn
	if c == nil {
		return nil
	}
	t.conn = nil
	defer c.Release()
	if c.Conn().IsClosed() || c.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := c.Exec(ctx, "ROLLBACK")
	return err
}

// held reports that this write transaction holds lock and read its key
// absent; the write of the key then no longer is (forget).
func (t *tx) held(lock string) bool { return t.absent[lock] }

func (t *tx) forget(lock string) { delete(t.absent, lock) }

// noteAbsent records that a locked read in a write transaction found no
// row at lock's key.
func (t *tx) noteAbsent(lock string, err error) {
	if t.readOnly || !errors.Is(err, pgx.ErrNoRows) && !errors.Is(err, store.ErrNotFound) {
		return
	}
	if t.absent == nil {
		t.absent = map[string]bool{}
	}
	t.absent[lock] = true
}

// sumRows reads rows to their end, scanning each with scan (when not
// nil), and returns a hash of every value read, or rows' error.
func sumRows(rows pgx.Rows, err error, scan func(pgx.Rows) error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var h maphash.Hash
	h.SetSeed(sumSeed)
	for rows.Next() {
		for _, v := range rows.RawValues() {
			var n [9]byte
			if v == nil {
				n[8] = 1
			}
			binary.BigEndian.PutUint64(n[:8], uint64(len(v)))
			h.Write(n[:])
			h.Write(v)
		}
		if scan != nil {
			if err := scan(rows); err != nil {
				return 0, err
			}
		}
	}
	return h.Sum64(), rows.Err()
}

var sumSeed = maphash.MakeSeed()

func one(sql string, args ...any) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return b
}

func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	br, _ := t.send(one(sql, args...), true)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, t.observe(err)
}

// queryAll runs sql and scans every row with scan; the statements before
// the last of b are only executed.
func (t *tx) queryAll(scan func(pgx.Rows) error, sql string, args ...any) error {
	return t.query(one(sql, args...), scan)
}

func (t *tx) query(b *pgx.Batch, scan func(pgx.Rows) error) error {
	br, alone := t.send(b, false)
	var err error
	for range b.Len() - 1 {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		var sum uint64
		rows, qerr := br.Query()
		sum, err = sumRows(rows, qerr, scan)
		if alone {
			t.sum = sum
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return t.observe(err)
}

// batchRow is the one row of b's last statement, or pgx.ErrNoRows.
type batchRow struct {
	t *tx
	b *pgx.Batch
}

func (r batchRow) Scan(dest ...any) error {
	found := false
	err := r.t.query(r.b, func(rows pgx.Rows) error {
		if found {
			return nil // a point read returns at most one row; Scan takes the first
		}
		found = true
		return rows.Scan(dest...)
	})
	if err == nil && !found {
		return pgx.ErrNoRows
	}
	return err
}

func (t *tx) queryRow(sql string, args ...any) sqlrow.Scanner {
	return batchRow{t: t, b: one(sql, args...)}
}

// readLocked runs s, a point read of at most one row, so that in a
// write transaction what it read stays as read until the transaction ends
// (repo decision 0011): first the transaction-scoped advisory lock lock (when
// not zero), held even when no row exists, so a concurrent writer of the
// same key waits; then query with FOR UPDATE, which waits for a concurrent
// writer of the row and reads its committed version. Both statements go
// in one round trip (with the BEGIN when it is the transaction's first);
// under READ COMMITTED the second takes its snapshot after the first has
// the lock. In a View it is a plain read.
func (t *tx) readLocked(lock sqlcore.Lock, s sqlcore.Stmt, args ...any) sqlrow.Scanner {
	if t.readOnly {
		return t.queryRow(sqlcore.Text(sqlcore.Postgres, s), args...)
	}
	b := &pgx.Batch{}
	if !lock.IsZero() {
		b.Queue(qAdvisoryLock, lock.Name())
	}
	b.Queue(sqlcore.ForUpdate(s), args...)
	return batchRow{t: t, b: b}
}

// savepoint runs fn inside a savepoint, rolled back if fn fails, so an
// expected constraint violation leaves the transaction usable.
func (t *tx) savepoint(fn func() error) error {
	if _, err := t.exec(`SAVEPOINT write`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := t.exec(`ROLLBACK TO SAVEPOINT write`); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	_, err := t.exec(`RELEASE SAVEPOINT write`)
	return err
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
