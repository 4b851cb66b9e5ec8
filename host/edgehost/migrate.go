package edgehost

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Executing migrations on a data plane (spec/runtime-v1.md §9.3,
// spec/lane-v1beta1.md §6.7 rule 2; repo decision 0057). With a Migrator
// the commit of a SQLiteMigrationApplication runs, inside the store
// transaction that commits it and after the store ledger's prefix check
// under the ledger's lock:
//
//  1. the Migrator on the database's own file, with the set's whole list
//     and each file's bytes: the file's in-file ledger must be a prefix of
//     the list, and each unapplied file commits with its in-file ledger row
//     in one SQLite transaction;
//  2. then the store ledger is made equal to the in-file ledger the
//     Migrator returns, in the transaction that commits the application.
//
// So the database file always leads the store. A crash (or a store
// fault) between a file's commit and the store commit leaves the in-file
// ledger longer; the retry passes the store's prefix check, the Migrator
// finds those files in the in-file ledger and runs none of them again, and
// the store ledger catches up. A failed file refuses the mutation
// (invalid_argument, migration_failed, naming the file and SQLite's
// message): the store transaction rolls back, so the store ledger keeps
// what it held before this commit, while the files of this set that ran
// before the failed one stay applied in the database file; the store
// ledger catches up with them at the database's next committed
// application (whose set must list them unchanged, as the in-file prefix
// check requires).

// MigrationFile is one file of a SQLiteMigrationSet as a Migrator runs it:
// path and digest as its manifest lists them, and its SQL text.
type MigrationFile struct {
	Path   string
	Digest string
	SQL    string
}

// Migrator executes files, the whole ordered list of a set, on the
// SQLiteDatabase with databaseUID (the data plane's
// host/runtime/gateway Gateway.ApplyMigrations, wired by host.Config
// Migrations). It returns the database file's own ledger as it stands
// after the call, also when a file failed, and a *wire.Error refusal
// (migration_required when the in-file ledger is no prefix of files,
// migration_failed for a failing file, backend_unavailable or
// resource_busy for a fault of the host's storage).
type Migrator func(ctx context.Context, databaseUID string, files []MigrationFile) ([]store.MigrationEntry, error)

// migrate runs p on the data plane and returns the entries to append to
// the store ledger: the in-file ledger beyond the store's. app names the
// application in refusals.
func (f *Family) migrate(tx store.Tx, app *store.Resource, p *plan) ([]store.MigrationEntry, error) {
	files := make([]MigrationFile, len(p.list))
	for i, e := range p.list {
		held, err := tx.Holds(app.Tenant, e.Digest)
		if err != nil {
			return nil, err
		}
		data, err := tx.Blob(e.Digest)
		if !held || errors.Is(err, store.ErrNotFound) {
			return nil, errorf(wire.ArtifactMissing, "migration_file_missing", "SQLiteMigrationSet %q lists %s (%s), whose bytes this tenant does not hold; upload and commit the set's MigrationBundle again", p.set.Name, e.Path, e.Digest)
		}
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(data) {
			return nil, errorf(wire.InvalidArgument, "migration_failed", "migration %s of SQLiteMigrationSet %q is not UTF-8 text, nothing of it was applied; fix the file in a new migration set", e.Path, p.set.Name)
		}
		files[i] = MigrationFile{Path: e.Path, Digest: e.Digest, SQL: string(data)}
	}
	inFile, err := f.Migrate(context.Background(), p.db.UID, files)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			held := ""
			if divergence(inFile, p.list) < 0 {
				held = fmt.Sprintf(" (the database's own ledger holds %d of the set's %d files; those stay applied)", len(inFile), len(p.list))
			}
			return nil, wire.Errorf(we.Code, "SQLiteMigrationApplication %q on SQLiteDatabase %q (uid %s): %s%s",
				app.Name, p.db.Name, p.db.UID, we.Message, held).WithHostCode(we.HostCode).WithDetail("database", p.db.UID)
		}
		return nil, err
	}
	if len(inFile) != len(p.list) || divergence(inFile, p.list) >= 0 {
		return nil, fmt.Errorf("the data plane applied SQLiteMigrationSet %q to database %s but its ledger holds %d entries, not the set's %d", p.set.Name, p.db.UID, len(inFile), len(p.list))
	}
	if len(p.ledger) >= len(inFile) {
		return nil, nil
	}
	return inFile[len(p.ledger):], nil
}
