// Package sqlcore is the SQL the two SQL stores share and the store.Tx
// methods whose bodies are the same on both, written once over Executor
// (ARCHITECTURE.md §3.1 D26; decision spec/decisions/0068-one-sql-core.md).
// host/store/sqlite and host/store/postgres each implement Executor on
// their transaction and embed Core in it; what differs between them — the
// concurrency engine (SQLite's one group-commit writer, PostgreSQL's
// batched round trips), creates and claims, queue sends, claims,
// acknowledgements and figures, ledger locks and appends, and the
// maintenance counts and artifact sweep — stays in each store (decision
// 0068, "Later").
package sqlcore

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// Executor runs the shared statements (Stmt) in one store transaction.
// Every method fails once the transaction's function has returned. A row
// not found is an error wrapping sql.ErrNoRows (pgx's ErrNoRows wraps it).
type Executor interface {
	// Exec runs a write and returns how many rows it changed.
	Exec(s Stmt, a Args) (int64, error)
	// ExecUnique runs a write a unique constraint may refuse: the refusal
	// is an error wrapping store.ErrConflict and leaves the transaction
	// usable (a savepoint on PostgreSQL).
	ExecUnique(s Stmt, a Args) (int64, error)
	// QueryRow runs a read of at most one row.
	QueryRow(s Stmt, a Args) sqlrow.Scanner
	// Query runs a read and calls scan on each row in order; scan's error
	// stops it.
	Query(s Stmt, scan func(sqlrow.Scanner) error, a Args) error
	// ReadLocked runs a point read so that, in a write transaction, what
	// it read stays as read until the transaction ends: on PostgreSQL
	// lock (when not zero) then SELECT … FOR UPDATE in one round trip
	// (repo decision 0011); on SQLite, whose one writer already holds
	// everything, a plain read.
	ReadLocked(lock Lock, s Stmt, a Args) sqlrow.Scanner
	// ReadAbsent tells the store what a ReadLocked of lock's key
	// returned (err), so a write transaction knows the keys it holds and
	// read absent (decision spec/decisions/0029-one-read-per-mutation.md).
	ReadAbsent(lock Lock, err error)
	// ExecLocked runs a write of lock's key after taking lock.
	ExecLocked(lock Lock, s Stmt, a Args) (int64, error)
	// Lock takes lock until a write transaction ends (none in a View, and
	// none on SQLite).
	Lock(lock Lock) error
}

// MaxArgs is the most parameters a shared statement binds (the resource
// insert's).
const MaxArgs = 20

// Args are a statement's parameters, passed by value: a call through
// Executor then allocates no slice for them, where a variadic ...any
// through an interface would allocate one per call (PERFORMANCE.md, log
// entry "One SQL core for both stores").
type Args struct {
	n int
	v [MaxArgs]any
}

// Values are the parameters in order.
func (a *Args) Values() []any { return a.v[:a.n] }

// bind is the Args of v; more than MaxArgs is a bug of this package.
func bind(v ...any) Args {
	if len(v) > MaxArgs {
		panic("sqlcore: a statement binds more than MaxArgs parameters")
	}
	var a Args
	a.n = copy(a.v[:], v)
	return a
}

// Core holds the shared store.Tx methods; a store's transaction embeds
// it with X set to itself.
type Core struct{ X Executor }

// Lock names what a point read or write of one key locks: a namespace and
// the key's parts (at most 5). It is a value, so building one costs
// nothing where locks are not taken (SQLite); Name spells it.
type Lock struct {
	n     int
	parts [6]string
}

// NewLock is the lock of namespace ns and key parts.
func NewLock(ns string, parts ...string) Lock {
	l := Lock{n: 1 + len(parts)}
	l.parts[0] = ns
	copy(l.parts[1:], parts)
	return l
}

// IsZero reports the zero Lock: no lock.
func (l Lock) IsZero() bool { return l.n == 0 }

// Name joins the lock's parts with U+001F ("" for the zero Lock); two
// locks of one name are one lock (a collision only serializes more).
func (l Lock) Name() string { return strings.Join(l.parts[:l.n], "\x1f") }

// ResourceLock is the lock of the resource key k.
func ResourceLock(k store.Key) Lock {
	return NewLock("resource", k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name)
}

// IdempotencyLock is the lock of one idempotency key.
func IdempotencyLock(lane, tenant, principal, space, key string) Lock {
	return NewLock("idempotency", lane, tenant, principal, space, key)
}

// ArtifactLock is the lock of one blob or manifest digest.
func ArtifactLock(digest string) Lock { return NewLock("artifact", digest) }

// NoRows reports an error of a read that found no row.
func NoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// NotFound turns a no-row error into store.ErrNotFound, wrapped with what.
func NotFound(err error, what string) error {
	if NoRows(err) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// NotFoundOr wraps err with what, or store.ErrNotFound when err is nil.
func NotFoundOr(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, store.ErrNotFound)
}
