package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// The migration ledgers of store.MigrationLedgers (spec/lane-v1beta1.md
// §6.7, repo decision 0055).
var ledgerCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"MigrationLedgerAppendRead", testLedgerAppendRead},
	{"MigrationLedgerAppendConflict", testLedgerAppendConflict},
	{"MigrationLedgerDeletedWithDatabase", testLedgerDatabaseDelete},
	{"MigrationLedgerConcurrentAppenders", testLedgerConcurrent},
}

func ledgerOf(t *testing.T, s store.Store, database string) []store.MigrationEntry {
	t.Helper()
	var out []store.MigrationEntry
	view(t, s, func(tx store.Tx) error {
		var err error
		out, err = tx.MigrationLedger(database)
		wantNoErr(t, "MigrationLedger", err)
		return nil
	})
	return out
}

func entry(path string) store.MigrationEntry {
	return store.MigrationEntry{Path: path, Digest: "sha256:" + fmt.Sprintf("%064x", len(path))}
}

// A ledger reads back in append order, under a lock or not; an unknown
// database's ledger is empty; ledgers of two databases are apart; a
// ledger outlives nothing but its database (an Update that fails after
// appending leaves it as it was).
func testLedgerAppendRead(t *testing.T, s store.Store) {
	equal(t, "ledger of an unknown database", ledgerOf(t, s, "uid-none"), []store.MigrationEntry{})
	a := []store.MigrationEntry{entry("0001.sql"), entry("0002_users.sql")}
	update(t, s, func(tx store.Tx) error {
		got, err := tx.LockMigrationLedger("acme", "uid-db1")
		wantNoErr(t, "LockMigrationLedger", err)
		equal(t, "locked ledger of a new database", got, []store.MigrationEntry{})
		return tx.AppendMigrationLedger("acme", "uid-db1", 0, a)
	})
	equal(t, "ledger after the first append", ledgerOf(t, s, "uid-db1"), a)
	b := entry("0003_index.sql")
	update(t, s, func(tx store.Tx) error {
		got, err := tx.LockMigrationLedger("acme", "uid-db1")
		wantNoErr(t, "LockMigrationLedger", err)
		equal(t, "locked ledger", got, a)
		return tx.AppendMigrationLedger("acme", "uid-db1", 2, []store.MigrationEntry{b})
	})
	equal(t, "ledger after the second append", ledgerOf(t, s, "uid-db1"), append(append([]store.MigrationEntry{}, a...), b))
	equal(t, "another database's ledger", ledgerOf(t, s, "uid-db2"), []store.MigrationEntry{})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.LockMigrationLedger("acme", "uid-db2"); err != nil {
			return err
		}
		if err := tx.AppendMigrationLedger("acme", "uid-db2", 0, []store.MigrationEntry{entry("x.sql")}); err != nil {
			return err
		}
		return errRefused
	})
	wantErr(t, "refused Update", err, errRefused)
	equal(t, "ledger after a refused Update", ledgerOf(t, s, "uid-db2"), []store.MigrationEntry{})
}

// An append at a position other than the ledger's length is ErrConflict
// and writes nothing.
func testLedgerAppendConflict(t *testing.T, s store.Store) {
	a := []store.MigrationEntry{entry("0001.sql")}
	update(t, s, func(tx store.Tx) error {
		if _, err := tx.LockMigrationLedger("acme", "uid-db1"); err != nil {
			return err
		}
		return tx.AppendMigrationLedger("acme", "uid-db1", 0, a)
	})
	for _, from := range []int{0, 2} {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if _, err := tx.LockMigrationLedger("acme", "uid-db1"); err != nil {
				return err
			}
			return tx.AppendMigrationLedger("acme", "uid-db1", from, []store.MigrationEntry{entry("0002.sql")})
		})
		wantErr(t, fmt.Sprintf("append at %d to a ledger of 1", from), err, store.ErrConflict)
	}
	equal(t, "ledger after refused appends", ledgerOf(t, s, "uid-db1"), a)
}

// Deleting the database's resource deletes its ledger; a new incarnation
// (another UID) starts empty; other databases keep theirs.
func testLedgerDatabaseDelete(t *testing.T, s store.Store) {
	db := kv("acme", "prod", "db", "uid-db1")
	other := kv("acme", "prod", "other", "uid-db2")
	create(t, s, db, other)
	update(t, s, func(tx store.Tx) error {
		for _, uid := range []string{db.UID, other.UID} {
			if _, err := tx.LockMigrationLedger("acme", uid); err != nil {
				return err
			}
			if err := tx.AppendMigrationLedger("acme", uid, 0, []store.MigrationEntry{entry("0001.sql")}); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(db.UID) })
	equal(t, "ledger of the deleted database", ledgerOf(t, s, db.UID), []store.MigrationEntry{})
	equal(t, "ledger of the other database", ledgerOf(t, s, other.UID), []store.MigrationEntry{entry("0001.sql")})
	again := kv("acme", "prod", "db", "uid-db3")
	create(t, s, again)
	equal(t, "ledger of the database created again", ledgerOf(t, s, again.UID), []store.MigrationEntry{})
	update(t, s, func(tx store.Tx) error {
		got, err := tx.LockMigrationLedger("acme", db.UID)
		wantNoErr(t, "LockMigrationLedger of the deleted UID", err)
		equal(t, "locked ledger of the deleted UID", got, []store.MigrationEntry{})
		return tx.AppendMigrationLedger("acme", db.UID, 0, []store.MigrationEntry{entry("late.sql")})
	})
}

// Concurrent appenders of one ledger are serialized by
// LockMigrationLedger: each appends at the length it read under the lock,
// and every one commits (no ErrConflict, no lost append), so the ledger
// ends with one entry per appender, each at its own position.
func testLedgerConcurrent(t *testing.T, s store.Store) {
	const appenders = 16
	errs := make([]error, appenders)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range appenders {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
				got, err := tx.LockMigrationLedger("acme", "uid-db1")
				if err != nil {
					return err
				}
				return tx.AppendMigrationLedger("acme", "uid-db1", len(got), []store.MigrationEntry{entry(fmt.Sprintf("m-%02d.sql", i))})
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		wantNoErr(t, fmt.Sprintf("appender %02d", i), err)
	}
	got := ledgerOf(t, s, "uid-db1")
	seen := map[string]bool{}
	for _, e := range got {
		seen[e.Path] = true
	}
	if len(got) != appenders || len(seen) != appenders {
		t.Errorf("ledger after %d concurrent appenders holds %d entries (%d distinct): %v", appenders, len(got), len(seen), got)
	}
}
