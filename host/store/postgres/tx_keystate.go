package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The point and range reads a mutation of one key makes, shared by their
// own methods and KeyState.
const (
	qAdvisoryLock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`
	// qAdvisoryLocks takes two locks in one statement, $1's first.
	qAdvisoryLocks = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0)), pg_advisory_xact_lock(hashtextextended($2, 0))`
	// qExpectFree verifies, after the key's lock, that the key $1–$5 holds
	// no resource, no pending operation and no pins naming it
	// (KeyStateExpectFree): takoform_expect raises codeExpectation
	// otherwise (migration 00006); qExpectFreeReplay also that the
	// idempotency key $6–$10 holds no record.
	qExpectFree       = `SELECT takoform_expect(` + freeKey + `, 'a free resource key')`
	qExpectFreeReplay = `SELECT takoform_expect(` + freeKey + ` AND NOT EXISTS (SELECT 1 FROM idempotency
		WHERE lane = $6 AND tenant = $7 AND principal = $8 AND space = $9 AND key = $10), 'a free resource key and an unused idempotency key')`
	freeKey = `NOT EXISTS (SELECT 1 FROM resources
		WHERE tenant = $1 AND space = $2 AND api_version = $3 AND kind = $4 AND name = $5)
		AND NOT EXISTS (SELECT 1 FROM operations WHERE done = 0 AND target_tenant = $1 AND target_space = $2
		AND target_api_version = $3 AND target_kind = $4 AND target_name = $5)
		AND NOT EXISTS (SELECT 1 FROM pins
		WHERE tenant = $1 AND space = $2 AND target_api_version = $3 AND target_kind = $4 AND target_name = $5)`
)

// The shared statements a mutation of one key batches (sqlcore), spelled
// for PostgreSQL. The inserts a pending write sends as they are: a unique
// key taken fails the transaction, which then never commits.
var (
	qResourceByKeyLocked = sqlcore.ForUpdate(sqlcore.ResourceByKey)
	qIdempotencyLocked   = sqlcore.ForUpdate(sqlcore.Idempotency)
	qPendingOperation    = sqlcore.Text(sqlcore.Postgres, sqlcore.PendingOperation)
	qPinsToName          = sqlcore.Text(sqlcore.Postgres, sqlcore.PinsToName)
	qInsertResource      = sqlcore.Text(sqlcore.Postgres, sqlcore.InsertResource)
	qInsertIdempotency   = sqlcore.Text(sqlcore.Postgres, sqlcore.InsertIdempotency)
	pgCreateResource     = qInsertResource + ` ON CONFLICT DO NOTHING`
	pgClaimIdempotency   = sqlcore.Text(sqlcore.Postgres, sqlcore.ClaimIdempotency)
)

func keyArgs(k store.Key) []any { return []any{k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name} }

func resourceLock(k store.Key) string { return sqlcore.ResourceLock(k).Name() }

func idempotencyLock(lane, tenant, principal, space, key string) string {
	return sqlcore.IdempotencyLock(lane, tenant, principal, space, key).Name()
}

// execLocked runs sql, a write, after taking lock, in one round trip.
func (t *tx) execLocked(lock, sql string, args ...any) (pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	b.Queue(qAdvisoryLock, lock)
	b.Queue(sql, args...)
	br, _ := t.send(b, true)
	_, err := br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, t.observe(err)
}

// KeyState reads, in a write transaction, Idempotency(replay) (when
// replay is not nil), Resource(k), PendingOperationFor(k) and
// PinsToName(k) as those methods do — the record and the resource under
// their advisory locks and FOR UPDATE, the two range reads after k's lock
// (repo decision 0011) — in one round trip: one pipelined batch, each
// statement taking its snapshot after the locks, which its first
// statement takes, the record's before the key's
// (spec/decisions/0029-one-read-per-mutation.md; PERFORMANCE.md, log entry
// "Where a create's and a read's CPU goes on PostgreSQL"). In a View it is
// those methods one after another.
func (t *tx) KeyState(k store.Key, replay *store.IdempotencyKey) (*store.KeyState, error) {
	if t.readOnly {
		return store.ReadKeyState(t, k, replay)
	}
	what := "read the state of " + sqlrow.KeyString(k)
	b := &pgx.Batch{}
	if replay != nil {
		b.Queue(qAdvisoryLocks, idempotencyLock(replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key), resourceLock(k))
		b.Queue(qIdempotencyLocked, replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key)
	} else {
		b.Queue(qAdvisoryLock, resourceLock(k))
	}
	b.Queue(qResourceByKeyLocked, keyArgs(k)...)
	b.Queue(qPendingOperation, keyArgs(k)...)
	b.Queue(qPinsToName, keyArgs(k)...)
	br, _ := t.send(b, false)
	st, err := readKeyState(br, k, replay)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err = t.observe(err); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if replay != nil && st.Replay == nil {
		t.noteAbsent(idempotencyLock(replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key), store.ErrNotFound)
	}
	if st.Resource == nil {
		t.noteAbsent(resourceLock(k), store.ErrNotFound)
	}
	return st, nil
}

// KeyStateExpectFree answers the empty KeyState without reading and
// queues its verification for the front of the transaction's next round
// trip: the locks KeyState takes, then qExpectFree (qExpectFreeReplay
// with a replay key) — so a create sends its BEGIN, the check, its
// inserts and COMMIT in one round trip. The keys count as read absent
// (their inserts are pending). Once Update runs fn again exact, in a View
// and for a second key it reads as KeyState does (store.Tx,
// spec/decisions/0048-postgres-create-one-round-trip.md).
func (t *tx) KeyStateExpectFree(k store.Key, replay *store.IdempotencyKey) (*store.KeyState, error) {
	if t.readOnly || t.exact || len(t.expect) > 0 || t.done || t.failed != nil {
		return t.KeyState(k, replay)
	}
	b := &pgx.Batch{}
	args := keyArgs(k)
	if replay != nil {
		b.Queue(qAdvisoryLocks, idempotencyLock(replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key), resourceLock(k))
		b.Queue(qExpectFreeReplay, append(args, replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key)...)
		t.noteAbsent(idempotencyLock(replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key), store.ErrNotFound)
	} else {
		b.Queue(qAdvisoryLock, resourceLock(k))
		b.Queue(qExpectFree, args...)
	}
	t.noteAbsent(resourceLock(k), store.ErrNotFound)
	t.expect = b.QueuedQueries
	return &store.KeyState{}, nil
}

// readKeyState reads the results of KeyState's batch in order.
func readKeyState(br pgx.BatchResults, k store.Key, replay *store.IdempotencyKey) (*store.KeyState, error) {
	st := &store.KeyState{}
	var err error
	if _, err := br.Exec(); err != nil { // the locks
		return nil, err
	}
	if replay != nil {
		if st.Replay, err = absentRow(sqlrow.ScanIdempotencyAt(br.QueryRow(), *replay)); err != nil {
			return nil, err
		}
	}
	if st.Resource, err = absentRow(sqlrow.ScanResourceAt(br.QueryRow(), k)); err != nil {
		return nil, err
	}
	if st.Pending, err = absentRow(sqlrow.ScanPendingOperation(br.QueryRow(), k)); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := sqlrow.ScanPin(rows)
		if err != nil {
			return nil, err
		}
		st.PinsTo = append(st.PinsTo, p)
	}
	return st, rows.Err()
}

// absentRow turns pgx.ErrNoRows into a nil value and no error.
func absentRow[T any](v *T, err error) (*T, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return v, err
}
