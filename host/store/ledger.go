package store

// MigrationLedgers is the part of Tx holding the durable migration ledger
// of each SQLiteDatabase (spec/lane-v1beta1.md §6.7; repo decision 0055):
// per database UID (never per name) an ordered list of applied migration
// entries, positions 0, 1, 2, … with no gap. A ledger only grows: no
// method removes or rewrites an entry. It outlives every
// SQLiteMigrationApplication; deleting the database's resource
// (DeleteResource) deletes its ledger in the same transaction, so a
// database created again under the same name (a new UID) starts with an
// empty one.
type MigrationLedgers interface {
	// MigrationLedger reads database's ledger in order (none: an empty
	// slice), without locking it: what a rendering reads.
	MigrationLedger(database string) ([]MigrationEntry, error)
	// LockMigrationLedger reads database's ledger as MigrationLedger does,
	// after taking the lock that serializes every writer of that ledger
	// until this transaction ends (SQLite: its single writer; PostgreSQL:
	// a row lock on the ledger's head row, created if absent, so the
	// ledger read is the one committed after any concurrent writer), so a
	// prefix check on what it returns still holds when this transaction
	// appends. Only in an Update.
	LockMigrationLedger(tenant, database string) ([]MigrationEntry, error)
	// AppendMigrationLedger appends entries at positions from,
	// from+1, … of database's ledger; from must be the ledger's length as
	// this transaction read it under LockMigrationLedger: ErrConflict when
	// a position is taken.
	AppendMigrationLedger(tenant, database string, from int, entries []MigrationEntry) error
}

// MigrationEntry is one applied migration of a ledger: a MigrationBundle
// file's path and the sha256 digest of its bytes (spec/lane-v1beta1.md
// §6.7).
type MigrationEntry struct {
	Path   string
	Digest string
}
