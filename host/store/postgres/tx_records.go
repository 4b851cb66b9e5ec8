package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Idempotency records (spec/host-api-v1alpha3.md §3.5) ---

// ClaimIdempotency inserts r unless a record with its key exists, which
// is an error wrapping store.ErrConflict, also when a concurrent
// transaction inserts it first (this insert waits for its commit).
func (t *tx) ClaimIdempotency(r *store.Idempotency) error {
	what := fmt.Sprintf("claim idempotency key %s/%s/%s/%s/%q", r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
	lock := sqlcore.IdempotencyLock(r.Lane, r.Tenant, r.Principal, r.Space, r.Key).Name()
	if t.held(lock) { // nobody else can claim it before this transaction ends
		t.forget(lock)
		t.pending = append(t.pending, pendingWrite{what: what, sql: qInsertIdempotency, args: sqlrow.IdempotencyArgs(r)})
		return nil
	}
	tag, err := t.execLocked(lock, pgClaimIdempotency, sqlrow.IdempotencyArgs(r)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrConflict)
	}
	return nil
}

// ClaimOperation returns the operation with id locked FOR UPDATE for this
// transaction, without waiting: an error wrapping store.ErrLocked when
// another transaction (another replica's worker) holds it, one wrapping
// store.ErrNotFound when there is none. A replica that dies mid-commit
// loses its connection and so its lock; another then claims it.
func (t *tx) ClaimOperation(id string) (*store.Operation, error) {
	what := "claim operation " + id
	op, err := sqlrow.ScanOperation(t.queryRow(`SELECT `+sqlrow.OperationCols+` FROM operations WHERE id = $1
		FOR UPDATE SKIP LOCKED`, id))
	if err == nil {
		return op, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var exists bool
	if err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM operations WHERE id = $1)`, id).Scan(&exists); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !exists {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil, fmt.Errorf("%s: %w", what, store.ErrLocked)
}
