package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
)

// The migration ledgers of store.MigrationLedgers (migration
// 00013_migration_ledgers.sql). Writers of one ledger are serialized by a
// row lock on its head row (repo decision 0055): LockMigrationLedger
// creates the head if absent, locks it FOR UPDATE, and only then reads the
// entries; under READ COMMITTED that read's snapshot is taken after the
// lock is held, so it sees every append committed before, and no replica
// can append until this transaction ends. The unlocked read is sqlcore's
// (Core.MigrationLedger).

const (
	pgLedgerEnsure = `INSERT INTO migration_ledgers (database, tenant, length) VALUES ($1, $2, 0)
		ON CONFLICT (database) DO NOTHING`
	pgLedgerLock   = `SELECT length FROM migration_ledgers WHERE database = $1 FOR UPDATE`
	pgLedgerHead   = `UPDATE migration_ledgers SET length = $3 WHERE database = $1 AND length = $2 RETURNING length`
	pgLedgerAppend = `INSERT INTO migration_ledger_entries (database, position, path, digest)
		SELECT $1, $2 + e.ord - 1, e.path, e.digest FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS e (path, digest, ord)`
)

// LockMigrationLedger locks database's ledger head (creating it) and then
// reads the ledger, in one round trip; in a View it is MigrationLedger.
func (t *tx) LockMigrationLedger(tenant, database string) ([]store.MigrationEntry, error) {
	if t.readOnly {
		return t.MigrationLedger(database)
	}
	b := &pgx.Batch{}
	b.Queue(pgLedgerEnsure, database, tenant)
	b.Queue(pgLedgerLock, database)
	b.Queue(pgText(sqlcore.LedgerEntries), database)
	return t.ledger(b, database)
}

func (t *tx) ledger(b *pgx.Batch, database string) ([]store.MigrationEntry, error) {
	out := []store.MigrationEntry{}
	err := t.query(b, func(rows pgx.Rows) error {
		var e store.MigrationEntry
		if err := rows.Scan(&e.Path, &e.Digest); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the migration ledger of %s: %w", database, err)
	}
	return out, nil
}

// AppendMigrationLedger moves the head from from to from+len(entries)
// (ErrConflict when the ledger does not hold exactly from entries) and
// inserts the entries at their positions.
func (t *tx) AppendMigrationLedger(tenant, database string, from int, entries []store.MigrationEntry) error {
	b := &pgx.Batch{}
	b.Queue(pgLedgerEnsure, database, tenant)
	b.Queue(pgLedgerHead, database, from, from+len(entries))
	moved := false
	if err := t.query(b, func(pgx.Rows) error { moved = true; return nil }); err != nil {
		return fmt.Errorf("append to the migration ledger of %s: %w", database, err)
	}
	if !moved {
		return fmt.Errorf("append to the migration ledger of %s at %d: it does not hold %d entries: %w", database, from, from, store.ErrConflict)
	}
	paths, digests := make([]string, len(entries)), make([]string, len(entries))
	for i, e := range entries {
		paths[i], digests[i] = e.Path, e.Digest
	}
	if _, err := t.exec(pgLedgerAppend, database, from, paths, digests); err != nil {
		return fmt.Errorf("append to the migration ledger of %s: %w", database, err)
	}
	return nil
}
