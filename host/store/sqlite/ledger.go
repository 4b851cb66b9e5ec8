package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/takoform/takoform/host/store"
)

// The migration ledgers of store.MigrationLedgers (migration
// 00010_migration_ledgers.sql); the unlocked read is sqlcore's
// (Core.MigrationLedger). The one writer serializes every Update, so
// LockMigrationLedger needs no lock of its own.

// LockMigrationLedger reads database's ledger; the single writer holds
// every other writer off until this Update ends.
func (t *tx) LockMigrationLedger(_, database string) ([]store.MigrationEntry, error) {
	return t.MigrationLedger(database)
}

// AppendMigrationLedger appends entries at positions from, from+1, … and
// moves the head's length; ErrConflict unless from is the ledger's length.
func (t *tx) AppendMigrationLedger(tenant, database string, from int, entries []store.MigrationEntry) error {
	var length int
	err := t.queryRow(qLedgerLength, database).Scan(&length)
	if errors.Is(err, sql.ErrNoRows) {
		length, err = 0, nil
	}
	if err != nil {
		return fmt.Errorf("append to the migration ledger of %s: %w", database, err)
	}
	if length != from {
		return fmt.Errorf("append to the migration ledger of %s at %d: it holds %d entries: %w", database, from, length, store.ErrConflict)
	}
	for i, e := range entries {
		if _, err := t.exec(qLedgerAppend, database, from+i, e.Path, e.Digest); err != nil {
			if isConflict(err) {
				err = errors.Join(err, store.ErrConflict)
			}
			return fmt.Errorf("append %s to the migration ledger of %s: %w", e.Path, database, err)
		}
	}
	if _, err := t.exec(qLedgerHead, database, tenant, from+len(entries)); err != nil {
		return fmt.Errorf("append to the migration ledger of %s: %w", database, err)
	}
	return nil
}
