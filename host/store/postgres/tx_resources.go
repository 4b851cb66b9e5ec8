package postgres

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// CreateResource inserts r under its key's lock. An existing key, UID or
// (tenant, native id) claim — any unique constraint of the table — is an
// error wrapping store.ErrConflict; the transaction stays usable (ON
// CONFLICT DO NOTHING). At a key this transaction read absent (Resource,
// KeyState) the insert is pending: sent with the next statement or the
// COMMIT, a UID or native id found taken then fails the transaction
// (store.Tx, decision spec/decisions/0029-one-read-per-mutation.md).
func (t *tx) CreateResource(r *store.Resource) error {
	what := fmt.Sprintf("create resource %s uid %s", sqlrow.KeyString(r.Key), r.UID)
	if r.UID == "" {
		return fmt.Errorf("%s: no UID", what)
	}
	lock := sqlcore.ResourceLock(r.Key).Name()
	if t.held(lock) {
		t.forget(lock)
		t.pending = append(t.pending, pendingWrite{what: what, sql: qInsertResource, args: sqlrow.ResourceArgs(r)})
		return nil
	}
	tag, err := t.execLocked(lock, pgCreateResource, sqlrow.ResourceArgs(r)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w (its key, UID or native id is taken)", what, store.ErrConflict)
	}
	return nil
}
