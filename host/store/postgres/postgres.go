// Package postgres is the host's scale-out store: store.Store on one
// PostgreSQL database (pgx v5, a pgxpool connection pool) that any number
// of host replicas share (ARCHITECTURE.md §5). Its schema is versioned
// goose migrations in migrations/, applied at Open under a PostgreSQL
// advisory lock so replicas starting together migrate once; a database
// whose schema is newer than this binary is refused with store.ErrTooNew.
//
// Concurrency (decision spec/decisions/0011-postgres-concurrency.md):
// every Update is one READ COMMITTED transaction on the caller's
// goroutine in which every point read locks what it read until the
// transaction ends — the row FOR UPDATE, and before a read by key an
// advisory lock on the key, held even when no row exists — so the host's
// checks inside it (fences, idempotency, relations, claims, worker
// aggregate rules, each anchored on a key it reads) hold as if Updates ran
// one at a time, across replicas; a deadlock reruns the Update from the
// start. Sequences (Next) advance outside the transaction, like
// PostgreSQL's own sequences: a value is never handed out twice, and a
// rolled-back Update leaves a gap. View is one REPEATABLE READ READ ONLY
// transaction: a consistent snapshot without locks. A transaction's BEGIN
// travels with its first statement, and a View that reads one statement
// runs it without a transaction (decision
// spec/decisions/0020-postgres-round-trips.md); an Update's inserts of
// keys it locked and read absent travel with its next statement or its
// COMMIT (decision spec/decisions/0029-one-read-per-mutation.md). A lost connection or a
// server that is shutting down or starting is an error wrapping
// store.ErrUnavailable.
//
// Durability: PostgreSQL's default synchronous_commit=on; Update returns
// nil only after the commit is flushed (acknowledged means durable).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"reflect"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/takoform/takoform/host/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrClosed is returned by Update and View on a closed Store.
var ErrClosed = errors.New("postgres store is closed")

// migrationLockID is the advisory lock key replicas take while migrating
// (any fixed int64; this one spells "takoform" in ASCII).
const migrationLockID int64 = 0x74616b6f666f726d

// Options tune a Store; the zero value selects every default.
type Options struct {
	// MaxConns caps the pool of connections serving Update and View.
	// Default the URL's pool_max_conns (pgxpool's parameter), else 32
	// (the database's max_connections must allow it per replica).
	MaxConns int32
	// MaxAttempts caps how often one Update runs its function when
	// PostgreSQL reports a serialization failure or deadlock. Default 64.
	MaxAttempts int
}

func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = 32
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 64
	}
	return o
}

// Store is a store.Store on one PostgreSQL database. It is safe for
// concurrent use and by any number of processes at once; Close it to
// release its connections.
type Store struct {
	url    string // redacted: safe to print
	opts   Options
	pool   *pgxpool.Pool // Update and View
	seq    *pgxpool.Pool // Next, outside the caller's transaction
	closed chan struct{}
	once   sync.Once
	// oneRead maps the code pointer of each View function seen to
	// whether it sent at most one statement the last time (View).
	oneRead sync.Map
	exact   exactBatcher // ExactAnswer's round trips (exactbatch.go)
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at rawURL (postgres:// or postgresql://,
// libpq keywords in the query), migrates its schema to the newest version
// this binary knows under an advisory lock, and returns the Store. A
// database whose schema version is newer is refused with an error wrapping
// store.ErrTooNew naming both versions; an unreachable server wraps
// store.ErrUnavailable. Errors name the URL without its password.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	s := &Store{url: Redact(rawURL), closed: make(chan struct{})}
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("open %s: a PostgreSQL location is a URL starting with postgres:// or postgresql:// (lowercase, nothing before it): postgres://USER:PASSWORD@HOST:PORT/DATABASE", s.url)
	}
	if problem := ambiguousUserinfo(rawURL); problem != "" {
		return nil, fmt.Errorf("open %s: %s", s.url, problem)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open %s: %s", s.url, parseProblem(rawURL, err))
	}
	if u, err := url.Parse(rawURL); opts.MaxConns <= 0 && err == nil && u.Query().Has("pool_max_conns") {
		opts.MaxConns = cfg.MaxConns
	}
	opts = opts.withDefaults()
	s.opts = opts
	cfg.MaxConns = opts.MaxConns
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open %s: %w", s.url, classify(err))
	}
	seqCfg := cfg.Copy()
	seqCfg.MaxConns = 4
	// A sequence's commit need not wait for its own flush: the Update that
	// uses the value commits after it with synchronous_commit=on, and that
	// flush covers every earlier WAL record (repo decision 0011).
	seqCfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	if s.seq, err = pgxpool.NewWithConfig(ctx, seqCfg); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open %s: %w", s.url, classify(err))
	}
	role, db := cfg.ConnConfig.User, cfg.ConnConfig.Database
	if err := s.pool.Ping(ctx); err != nil {
		s.closePools()
		return nil, fmt.Errorf("open %s: %w%s", s.url, classify(err), connectHint(err, role, db))
	}
	if err := s.migrate(ctx); err != nil {
		s.closePools()
		return nil, fmt.Errorf("%w%s", err, connectHint(err, role, db))
	}
	s.startExactLoops()
	return s, nil
}

// migrate applies the embedded migrations with goose's Provider holding
// a session advisory lock (so concurrent replicas migrate once), refusing
// a database whose goose version is newer than the newest migration.
func (s *Store) migrate(ctx context.Context) (err error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	// goose polls for the lock every 5 s by default: once a second keeps a
	// replica that starts beside a migrating one (or after a failed Open
	// whose session is still closing) from waiting 5 s, for the same
	// 5-minute bound.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer store.JoinCleanup(&err, db.Close)
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", s.url, classify(err))
	}
	if current > known {
		return fmt.Errorf("open %s: %w: the database has schema version %d, this binary knows up to %d; run a newer takoform", s.url, store.ErrTooNew, current, known)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s from schema version %d to %d: %w", s.url, current, known, classify(err))
	}
	return nil
}

// URL is the database URL this Store was opened on, password redacted.
func (s *Store) URL() string { return s.url }

// Pool is the Store's connection pool, for tools that work on whole tables
// (`takoform host copy`, tests); the host itself goes through Update and
// View only.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Update runs fn in one READ COMMITTED transaction whose point reads lock
// what they read, and commits it iff fn returns nil; fn's error is returned
// as is (the transaction rolled back). When PostgreSQL reports a deadlock
// or a serialization failure — at any
// statement of fn, whatever fn returned, or at COMMIT — the transaction is
// rolled back and fn runs again, up to Options.MaxAttempts times. A lost
// connection is an error wrapping store.ErrUnavailable: when it happens at
// COMMIT, the outcome is unknown to this process (the client's retry with
// its Idempotency-Key replays it). A state fn took for granted
// (Tx.KeyStateExpectFree) that proves wrong, or that an error of fn's
// rests on before it was verified, rolls the transaction back and runs fn
// again at once with every KeyStateExpectFree reading
// (spec/decisions/0048-postgres-create-one-round-trip.md).
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	exact := false
	for attempt := 1; ; attempt++ {
		t, err := s.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, false, false, exact, fn)
		if (t.wrong || t.unverified) && !exact {
			exact, attempt = true, attempt-1
			continue
		}
		if !t.retry {
			return err
		}
		if attempt >= s.opts.MaxAttempts {
			// Contention passes: the host answers backend_unavailable
			// (retryable), never a 500, and the client's retry with its
			// Idempotency-Key runs it again.
			return fmt.Errorf("%w: update gave up after %d attempts ended by deadlocks or serialization failures: %w", store.ErrUnavailable, attempt, err)
		}
		// Jittered backoff, growing to ~8ms, so colliding transactions part.
		d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 3)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// View runs fn in a REPEATABLE READ READ ONLY transaction: one snapshot of
// what was committed when it began. Writes inside fn fail; fn's error is
// returned as is. A kind of function (fn's code) that read one statement
// the last time runs its first read outside a transaction, in one round
// trip; should it read again, the transaction begins then and fn goes on
// if its first read reads the same in it, or runs again from the start
// (decision spec/decisions/0020-postgres-round-trips.md).
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	kind := reflect.ValueOf(fn).Pointer()
	v, _ := s.oneRead.Load(kind) // v is nil or a bool; ok adds nothing
	single := v == true
	// A View writes nothing: no serialization failure or deadlock ends it.
	t, err := s.run(ctx, opts, true, single, false, fn)
	if t.escalate {
		t, err = s.run(ctx, opts, true, false, false, fn)
	}
	if one := t.sent <= 1 && !t.escalate; one != single {
		s.oneRead.Store(kind, one)
	}
	return err
}

// run is one attempt of fn; the tx it returns tells whether a
// serialization failure or deadlock ended it (retry) and whether a single
// View must run again (escalate). The transaction begins with fn's first
// statement; when that first round trip finds its pooled connection dead,
// fn runs again on another, up to MaxConns+1 times (nothing of it reached
// a transaction that could commit).
func (s *Store) run(ctx context.Context, opts pgx.TxOptions, readOnly, single, exact bool, fn func(store.Tx) error) (*tx, error) {
	for range s.opts.MaxConns + 1 {
		if t, err := s.attempt(ctx, opts, readOnly, single, exact, fn); t.stale == nil {
			return t, err
		}
	}
	return s.attempt(ctx, opts, readOnly, single, exact, fn)
}

func (s *Store) attempt(ctx context.Context, opts pgx.TxOptions, readOnly, single, exact bool, fn func(store.Tx) error) (_ *tx, err error) {
	t := &tx{ctx: ctx, store: s, opts: opts, readOnly: readOnly, single: single, exact: exact}
	t.Core.X = t
	select {
	case <-s.closed:
		return t, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return t, err
	}
	defer func() { // also when fn panics, so the connection returns to the pool
		t.done = true
		store.JoinCleanup(&err, func() error { return t.end(context.WithoutCancel(ctx)) })
	}()
	err = fn(t)
	switch {
	case t.stale != nil: // fn may have swallowed it: never commit
		return t, t.stale
	case t.wrong || err != nil && len(t.expect) > 0: // fn decided on a state that is not, or may not be, so
		t.unverified = true
		return t, errors.Join(errExpectation, err)
	case t.escalate || err != nil:
		return t, err
	case t.retry: // fn swallowed a serialization failure: never commit it
		return t, fmt.Errorf("transaction on %s: %w", s.url, t.retryErr)
	case t.failed != nil: // fn swallowed a pending write's failure
		return t, t.failed
	case readOnly || t.conn == nil && len(t.expect) == 0 && len(t.pending) == 0:
		return t, nil
	}
	if err := t.commit(context.WithoutCancel(ctx)); err != nil {
		if isRetryable(err) {
			t.retry = true
			return t, fmt.Errorf("commit on %s: %w", s.url, err)
		}
		return t, fmt.Errorf("commit on %s: %w", s.url, classify(err))
	}
	return t, nil
}

// Close releases the Store's connections; Update and View then fail with
// ErrClosed. It is safe to call twice.
func (s *Store) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.closePools()
		s.exact.loops.Wait()
	})
	return nil
}

func (s *Store) closePools() {
	if s.seq != nil {
		s.seq.Close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
}

// Rollback ends tx unless it already ended: after Commit (or a failed
// Commit) it is a no-op, not pgx.ErrTxClosed.
func Rollback(ctx context.Context, tx pgx.Tx) error {
	if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}
