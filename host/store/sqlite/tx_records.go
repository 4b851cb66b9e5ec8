package sqlite

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Idempotency records (spec/host-api-v1alpha3.md §3.5) ---

// ClaimIdempotency inserts r unless a record with its key exists, which
// is an error wrapping store.ErrConflict.
func (t *tx) ClaimIdempotency(r *store.Idempotency) error {
	res, err := t.exec(query(sqlcore.ClaimIdempotency), sqlrow.IdempotencyArgs(r)...)
	n := 0
	if err == nil {
		n, err = affected(res)
	}
	if err == nil && n == 0 {
		err = store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("claim idempotency key %s/%s/%s/%s/%q: %w", r.Lane, r.Tenant, r.Principal, r.Space, r.Key, err)
	}
	return nil
}

// ClaimOperation returns the operation with id like Operation: the one
// writer goroutine already keeps any other transaction from holding it.
func (t *tx) ClaimOperation(id string) (*store.Operation, error) { return t.Operation(id) }

// --- Sequences ---

// Next returns the next value of sequence: 1 on first use, then 2, 3, …
// Sequences are independent of each other.
func (t *tx) Next(sequence string) (int64, error) {
	var n int64
	if err := t.queryRow(qNext, sequence).Scan(&n); err != nil {
		return 0, fmt.Errorf("advance sequence %q: %w", sequence, err)
	}
	return n, nil
}
