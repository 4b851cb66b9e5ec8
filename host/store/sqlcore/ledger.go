package sqlcore

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The migration ledgers of store.MigrationLedgers (spec/lane-v1beta1.md
// §6.7; repo decision 0055): the unlocked read is shared. Locking and
// appending stay in each store: SQLite's one writer already serializes
// every writer of a ledger, where PostgreSQL creates and locks the
// ledger's head row and appends every entry in one statement.

// MigrationLedger reads database's ledger in order (none: an empty
// slice), without locking it.
func (c Core) MigrationLedger(database string) ([]store.MigrationEntry, error) {
	out := []store.MigrationEntry{}
	var e store.MigrationEntry
	dest := []any{&e.Path, &e.Digest} // one for every row (Rows)
	err := c.X.Query(LedgerEntries, func(row sqlrow.Scanner) error {
		if err := row.Scan(dest...); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	}, bind(database))
	if err != nil {
		return nil, fmt.Errorf("read the migration ledger of %s: %w", database, err)
	}
	return out, nil
}
