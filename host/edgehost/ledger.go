package edgehost

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// The durable migration ledger of a SQLiteDatabase and the
// SQLiteMigrationApplication that advances it (spec/lane-v1beta1.md §6.7,
// §5.2; repo decision 0055). The ledger lives in the store, per database
// UID (store.MigrationLedgers). Without a data plane (no Family.Migrate)
// applying a set appends its unapplied suffix to the ledger in the
// transaction that commits the application and executes no SQL; with
// one, the files run on the database's own file first and the store
// ledger follows its in-file ledger (migrate.go, repo decision 0057).

// plan is what an application's commit decides on: the database it
// advances, the ledger as read under the ledger's lock, and the set's
// ordered (path, digest) list.
type plan struct {
	db     *store.Resource
	set    *store.Resource
	ledger []store.MigrationEntry
	list   []store.MigrationEntry
}

// setEntries is the ordered (path, digest) list of a SQLiteMigrationSet's
// manifest, resolved as its apply resolves it (manifestOf).
func (f *Family) setEntries(tx store.Tx, set *store.Resource) ([]store.MigrationEntry, error) {
	m, _, err := f.manifestOf(tx, set)
	if err != nil {
		return nil, err
	}
	out := make([]store.MigrationEntry, len(m.Files))
	for i, file := range m.Files {
		out[i] = store.MigrationEntry{Path: file.Path, Digest: file.Digest}
	}
	return out, nil
}

// migrationPlan applies rule 1 of spec/lane-v1beta1.md §6.7 to an
// application as it would be stored: under the database ledger's lock
// (store.Tx.LockMigrationLedger, so two replicas cannot interleave) the
// ledger must be an exact prefix of the set's list, else
// migration_required (409) naming the first position that differs, or
// both lengths. A nil plan with no error: a relation target is absent,
// which relation resolution has refused already.
func (f *Family) migrationPlan(tx store.Tx, res *store.Resource, spec map[string]any) (*plan, error) {
	db, err := lookup(tx, key(res, SQLiteDatabase, relName(spec, "database")))
	if err != nil || db == nil {
		return nil, err
	}
	set, err := lookup(tx, key(res, SQLiteMigrationSet, relName(spec, "migrationSet")))
	if err != nil || set == nil {
		return nil, err
	}
	list, err := f.setEntries(tx, set)
	if err != nil {
		return nil, err
	}
	ledger, err := tx.LockMigrationLedger(res.Tenant, db.UID)
	if err != nil {
		return nil, err
	}
	if i := divergence(ledger, list); i >= 0 {
		var what string
		if i < len(list) {
			what = fmt.Sprintf("at position %d the ledger holds %s (%s) but the set lists %s (%s): the set rewrites or reorders an applied migration",
				i, ledger[i].Path, ledger[i].Digest, list[i].Path, list[i].Digest)
		} else {
			what = fmt.Sprintf("the ledger holds %d applied migrations but the set lists only %d: the set removes applied migrations", len(ledger), len(list))
		}
		return nil, wire.Errorf(wire.MigrationRequired, "SQLiteMigrationSet %q does not extend the migration ledger of SQLiteDatabase %q (uid %s): %s. Applied migrations are never rewritten; create a new SQLiteMigrationSet that lists every applied migration unchanged, in order, then the new ones, and apply that",
			set.Name, db.Name, db.UID, what).WithHostCode("migration_ledger_prefix").WithDetail("database", db.UID)
	}
	return &plan{db: db, set: set, ledger: ledger, list: list}, nil
}

// divergence is the first position where ledger is not a prefix of list
// (a differing entry, or len(list) when the ledger is longer), -1 when it
// is a prefix.
func divergence(ledger, list []store.MigrationEntry) int {
	for i, e := range ledger {
		if i >= len(list) || list[i] != e {
			return i
		}
	}
	return -1
}

// Record appends an application's unapplied suffix to its database's
// ledger (rule 2 of spec/lane-v1beta1.md §6.7), in the transaction that
// commits it, after CheckCommit and before the application is rendered,
// so it renders Ready at once. The plan is decided again under the same
// lock the check took: an Update runs in one transaction, so it finds the
// ledger CheckCommit read. With a data plane (Migrate) the suffix is
// what the database file's own ledger holds beyond the store's after the
// files ran there (migrate.go); a failed file refuses the commit.
func (f *Family) Record(tx store.Tx, def *form.Definition, res *store.Resource) error {
	if v1beta1Kind(def) != SQLiteMigrationApplication {
		return nil
	}
	spec, err := specOf(res)
	if err != nil {
		return err
	}
	p, err := f.migrationPlan(tx, res, spec)
	if err != nil || p == nil {
		return err
	}
	suffix := p.list[len(p.ledger):]
	if f.Migrate != nil {
		if suffix, err = f.migrate(tx, res, p); err != nil {
			return err
		}
	}
	if len(suffix) == 0 {
		return nil
	}
	return tx.AppendMigrationLedger(res.Tenant, p.db.UID, len(p.ledger), suffix)
}

// migrationReadiness renders an application's Ready condition (rules 2–4
// of spec/lane-v1beta1.md §5.2; relation drift, rule 1, is the host's and
// takes precedence): DependencyMissing when a target is gone or the set's
// manifest is not held, not decodable or not valid; Available when the
// database's ledger equals the set's list; otherwise Reconciling, its
// hostReason stating both lengths and the database UID.
func (f *Family) migrationReadiness(tx store.Tx, res *store.Resource) (wire.Condition, error) {
	spec, err := specOf(res)
	if err != nil {
		return wire.Condition{}, err
	}
	missing := func(msg, why string) wire.Condition {
		return wire.Condition{Type: "Ready", Status: "False", Reason: "DependencyMissing", Message: msg, HostReason: hostReason(why)}
	}
	db, err := lookup(tx, key(res, SQLiteDatabase, relName(spec, "database")))
	if err != nil {
		return wire.Condition{}, err
	}
	set, err := lookup(tx, key(res, SQLiteMigrationSet, relName(spec, "migrationSet")))
	if err != nil {
		return wire.Condition{}, err
	}
	switch {
	case db == nil:
		return missing("the SQLiteDatabase is gone", "SQLiteDatabase "+strconv.Quote(relName(spec, "database"))+" no longer exists"), nil
	case set == nil:
		return missing("the SQLiteMigrationSet is gone", "SQLiteMigrationSet "+strconv.Quote(relName(spec, "migrationSet"))+" no longer exists"), nil
	}
	list, err := f.setEntries(tx, set)
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		return missing("the migration set's manifest is not usable; commit it again or replace the set", "SQLiteMigrationSet "+strconv.Quote(set.Name)+": "+we.Message), nil
	}
	if err != nil {
		return wire.Condition{}, err
	}
	ledger, err := tx.MigrationLedger(db.UID)
	if err != nil {
		return wire.Condition{}, err
	}
	if len(ledger) == len(list) && divergence(ledger, list) < 0 {
		return wire.Condition{Type: "Ready", Status: "True", Reason: "Available"}, nil
	}
	msg := "the database's migration ledger does not equal this application's set"
	if len(ledger) > len(list) && divergence(ledger, list) == len(list) {
		msg = "a longer migration set has been applied to the database since; this application can only be deleted"
	}
	return wire.Condition{Type: "Ready", Status: "False", Reason: "Reconciling", Message: msg,
		HostReason: hostReason(fmt.Sprintf("ledger of SQLiteDatabase uid %s holds %d entries; SQLiteMigrationSet %q lists %d", db.UID, len(ledger), set.Name, len(list)))}, nil
}

// applicationsOf lists the keys of every application of db but res: the
// renderings a change of db's ledger moves.
func applicationsOf(tx store.Tx, res *store.Resource) ([]store.Key, error) {
	spec, err := specOf(res)
	if err != nil {
		return nil, err
	}
	db, err := lookup(tx, key(res, SQLiteDatabase, relName(spec, "database")))
	if err != nil || db == nil {
		return nil, err
	}
	apps, err := holders(tx, db, SQLiteMigrationApplication)
	if err != nil {
		return nil, err
	}
	var out []store.Key
	for _, a := range apps {
		if a.UID != res.UID {
			out = append(out, a.Key)
		}
	}
	return out, nil
}
