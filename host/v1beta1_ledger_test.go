package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// The sqlite-migration-ledger-readiness check's migrations
// (spec/lane-v1beta1.md §14): 0001.sql of 29 bytes, then 0002.sql of 40.
// The data sets carry only the probe's manifest digests, not these bytes,
// so ours are our own SQL of the same sizes.
var (
	sql0001 = file{"0001.sql", artifact.MediaTypeSQL, []byte("CREATE TABLE t (id INTEGER);\n")}
	sql0002 = file{"0002.sql", artifact.MediaTypeSQL, []byte("CREATE INDEX t_id ON t (id, id, id, id);\n")}
)

func appSpec(db, set string) map[string]any {
	return map[string]any{"database": rel("SQLiteDatabase", db), "migrationSet": rel("SQLiteMigrationSet", set)}
}

// ledgerOf reads database uid's ledger from the host's store.
func (b *beta) ledgerOf(uid string) []store.MigrationEntry {
	b.t.Helper()
	var out []store.MigrationEntry
	if err := b.h.Store.View(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.MigrationLedger(uid)
		return err
	}); err != nil {
		b.t.Fatal(err)
	}
	return out
}

func entriesOf(files ...file) []store.MigrationEntry {
	out := []store.MigrationEntry{}
	for _, f := range files {
		m, _ := filesManifest(artifact.KindMigrationBundle, f)
		out = append(out, store.MigrationEntry{Path: f.path, Digest: m.Files[0].Digest})
	}
	return out
}

func wantLedger(t *testing.T, what string, got, want []store.MigrationEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: ledger %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: ledger %v, want %v", what, got, want)
			return
		}
	}
}

// The durable migration ledger (spec/lane-v1beta1.md §6.7, §5.2, §14
// sqlite-migration-ledger-readiness): the check's exact scenario; the
// exact-prefix rule refuses a set that rewrites, reorders or removes an
// applied entry with migration_required, changing nothing; a
// spec-identical re-apply of an older application re-runs the rule;
// deleting applications changes no ledger, which outlives them; a
// database created again starts with an empty ledger.
func TestV1beta1MigrationLedger(t *testing.T) {
	onStores(t, func(t *testing.T, o hosttest.Options) {
		b := startBeta(t, o)
		setA := b.upload(artifact.KindMigrationBundle, sql0001)
		db := b.mustCreate("SQLiteDatabase", "sqlite-database-probe", map[string]any{})
		b.mustCreate("SQLiteMigrationSet", "sqlite-migration-set-probe", map[string]any{"manifestDigest": setA})
		first := b.mustCreate("SQLiteMigrationApplication", "sqlite-migration-application-probe", appSpec("sqlite-database-probe", "sqlite-migration-set-probe"))
		wantReady(t, "the first application", first, "True", "Available")
		wantLedger(t, "after the first application", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001))

		setB := b.upload(artifact.KindMigrationBundle, sql0001, sql0002)
		b.mustCreate("SQLiteMigrationSet", "sqlite-migration-set-superset", map[string]any{"manifestDigest": setB})
		second := b.mustCreate("SQLiteMigrationApplication", "sqlite-migration-application-superset", appSpec("sqlite-database-probe", "sqlite-migration-set-superset"))
		wantReady(t, "the superset application", second, "True", "Available")
		wantLedger(t, "after the superset application", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001, sql0002))
		older := b.read("SQLiteMigrationApplication", "sqlite-migration-application-probe")
		c := wantReady(t, "the first application after the superset", older, "False", "Reconciling")
		if c.HostReason == "" || strings.Contains(c.HostReason, "one live") || !strings.Contains(c.HostReason, db.Metadata.UID) ||
			!strings.Contains(c.HostReason, "holds 2 entries") || !strings.Contains(c.HostReason, "lists 1") {
			t.Errorf("the first application's hostReason %q must state both lengths and the database UID, and never a one-live-application policy", c.HostReason)
		}
		if older.Metadata.Generation != first.Metadata.Generation || older.Metadata.Revision == first.Metadata.Revision {
			t.Errorf("the rendering change moved generation %s → %s, revision %s → %s; want the revision only",
				first.Metadata.Generation, older.Metadata.Generation, first.Metadata.Revision, older.Metadata.Revision)
		}

		// Rule 4: a spec-identical re-apply of the older application re-runs
		// the prefix rule and fails; nothing changes.
		_, err := b.reapply(older)
		if we := wantCode(t, "re-applying the older application", err, wire.MigrationRequired); we != nil &&
			(!strings.Contains(we.Message, "holds 2") || !strings.Contains(we.Message, "lists only 1")) {
			t.Errorf("the refusal does not name both lengths: %s", we.Message)
		}
		if again := b.read("SQLiteMigrationApplication", "sqlite-migration-application-probe"); again.Metadata.Revision != older.Metadata.Revision {
			t.Errorf("the refused re-apply moved the revision %s → %s", older.Metadata.Revision, again.Metadata.Revision)
		}

		// Rewrite, reorder, removal: refused before anything is written.
		rewritten := file{"0001.sql", artifact.MediaTypeSQL, []byte("CREATE TABLE u (id INTEGER);\n")}
		for name, files := range map[string][]file{
			"rewrite": {rewritten, sql0002},
			"reorder": {sql0002, sql0001},
			"removal": {sql0001},
			"renamed": {{"0001_init.sql", artifact.MediaTypeSQL, sql0001.data}, sql0002},
		} {
			d := b.upload(artifact.KindMigrationBundle, files...)
			b.mustCreate("SQLiteMigrationSet", "set-"+name, map[string]any{"manifestDigest": d})
			_, err := b.create("SQLiteMigrationApplication", "app-"+name, appSpec("sqlite-database-probe", "set-"+name))
			if we := wantCode(t, "an application of the "+name+" set", err, wire.MigrationRequired); we != nil && !strings.Contains(we.Message, db.Metadata.UID) {
				t.Errorf("the %s refusal does not name the database UID: %s", name, we.Message)
			}
			if _, err := b.c.Read(context.Background(), b.addr("SQLiteMigrationApplication", "app-"+name)); err == nil {
				t.Errorf("the refused %s application was created", name)
			}
			if err := b.del("SQLiteMigrationSet", "set-"+name); err != nil {
				t.Errorf("delete set-%s: %v", name, err)
			}
		}
		wantLedger(t, "after the refusals", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001, sql0002))

		// Targets are protected while an application pins them.
		wantCode(t, "delete the database under its applications", b.del("SQLiteDatabase", "sqlite-database-probe"), wire.DependencyInUse)
		wantCode(t, "delete a set an application pins", b.del("SQLiteMigrationSet", "sqlite-migration-set-probe"), wire.DependencyInUse)

		// The check's teardown, each 204 under its current generation; the
		// ledger outlives both applications.
		for _, r := range [][2]string{{"SQLiteMigrationApplication", "sqlite-migration-application-superset"}, {"SQLiteMigrationApplication", "sqlite-migration-application-probe"}} {
			if err := b.del(r[0], r[1]); err != nil {
				t.Fatalf("delete %s %q: %v", r[0], r[1], err)
			}
		}
		wantLedger(t, "after deleting every application", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001, sql0002))
		again := b.mustCreate("SQLiteMigrationApplication", "again", appSpec("sqlite-database-probe", "sqlite-migration-set-superset"))
		wantReady(t, "a new application of the applied set", again, "True", "Available")
		wantLedger(t, "after re-applying the applied set", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001, sql0002))
		if err := b.del("SQLiteMigrationApplication", "again"); err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]string{{"SQLiteMigrationSet", "sqlite-migration-set-superset"}, {"SQLiteMigrationSet", "sqlite-migration-set-probe"}, {"SQLiteDatabase", "sqlite-database-probe"}} {
			if err := b.del(r[0], r[1]); err != nil {
				t.Fatalf("delete %s %q: %v", r[0], r[1], err)
			}
		}

		// A database created again is a new UID with an empty ledger: the
		// first set applies from scratch.
		reborn := b.mustCreate("SQLiteDatabase", "sqlite-database-probe", map[string]any{})
		if reborn.Metadata.UID == db.Metadata.UID {
			t.Fatal("the database created again kept its UID")
		}
		wantLedger(t, "ledger of the old UID", b.ledgerOf(db.Metadata.UID), nil)
		b.mustCreate("SQLiteMigrationSet", "sqlite-migration-set-probe", map[string]any{"manifestDigest": setA})
		wantReady(t, "the first set on the new database", b.mustCreate("SQLiteMigrationApplication", "fresh", appSpec("sqlite-database-probe", "sqlite-migration-set-probe")), "True", "Available")
		wantLedger(t, "ledger of the new database", b.ledgerOf(reborn.Metadata.UID), entriesOf(sql0001))
	})
}

// An application accepted with 202 appends its suffix only at commit,
// where the prefix rule runs again (spec/lane-v1beta1.md §4): the
// superset accepted first commits first; the shorter set accepted next
// passed the rule at accept but fails it at commit with
// migration_required, and the ledger holds the superset.
func TestV1beta1MigrationRuleRerunsAtCommit(t *testing.T) {
	onStores(t, func(t *testing.T, o hosttest.Options) {
		sync := startBeta(t, o)
		setA := sync.upload(artifact.KindMigrationBundle, sql0001)
		setB := sync.upload(artifact.KindMigrationBundle, sql0001, sql0002)
		db := sync.mustCreate("SQLiteDatabase", "db", map[string]any{})
		sync.mustCreate("SQLiteMigrationSet", "a", map[string]any{"manifestDigest": setA})
		sync.mustCreate("SQLiteMigrationSet", "b", map[string]any{"manifestDigest": setB})
		sync.h.Stop()

		// The same store again, every mutation now a 202 committed a second
		// after it was accepted.
		async := o
		async.Path, async.Catalog, async.SyncBudget, async.ProvisioningDelay = sync.h.Path, sync.catalog, time.Millisecond, time.Second
		b := betaOn(t, hosttest.Start(t, async), sync.catalog)
		var ops []*client.Mutation
		for _, set := range []string{"b", "a"} {
			req := b.request("SQLiteMigrationApplication", "app-"+set, appSpec("db", set))
			p, err := b.c.Prepare(scoped(), req, "")
			if err != nil {
				t.Fatal(err)
			}
			m, err := b.c.Apply(scoped(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
				Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
			if err != nil || !m.Accepted() {
				t.Fatalf("apply app-%s: %v (accepted %v)", set, err, m != nil && m.Accepted())
			}
			ops = append(ops, m)
		}
		wantLedger(t, "after both accepts", b.ledgerOf(db.Metadata.UID), nil)
		if _, err := b.c.WaitOperation(context.Background(), ops[0].Operation.ID); err != nil {
			t.Fatalf("the superset's operation: %v", err)
		}
		_, err := b.c.WaitOperation(context.Background(), ops[1].Operation.ID)
		wantCode(t, "the shorter set's operation, committed after the superset", err, wire.MigrationRequired)
		wantLedger(t, "after both commits", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001, sql0002))
		wantReady(t, "the superset application", b.read("SQLiteMigrationApplication", "app-b"), "True", "Available")
		if _, err := b.c.Read(context.Background(), b.addr("SQLiteMigrationApplication", "app-a")); err == nil {
			t.Error("the application refused at commit exists")
		}
	})
}

// Import runs the same rules as apply (spec/lane-v1beta1.md §6.7 rule 1:
// "on apply, import and at 202 commit"): an imported application appends
// its suffix and renders Ready; one whose set rewrites the ledger is
// refused migration_required and nothing is adopted.
func TestV1beta1MigrationImport(t *testing.T) {
	b := startBeta(t, hosttest.Options{})
	db := b.mustCreate("SQLiteDatabase", "db", map[string]any{})
	b.mustCreate("SQLiteMigrationSet", "a", map[string]any{"manifestDigest": b.upload(artifact.KindMigrationBundle, sql0001)})
	rewritten := file{"0001.sql", artifact.MediaTypeSQL, []byte("CREATE TABLE u (id INTEGER);\n")}
	b.mustCreate("SQLiteMigrationSet", "rewritten", map[string]any{"manifestDigest": b.upload(artifact.KindMigrationBundle, rewritten)})
	imp := func(name, set string) (*wire.Resource, error) {
		req := b.request("SQLiteMigrationApplication", name, appSpec("db", set))
		return b.c.ImportAndWait(scoped(), wire.ImportRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
			Spec: req.Spec, NativeID: "native/" + name}, client.Precondition{})
	}
	res, err := imp("adopted", "a")
	if err != nil {
		t.Fatalf("import an application: %v", err)
	}
	wantReady(t, "the imported application", res, "True", "Available")
	wantLedger(t, "after the import", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001))
	_, err = imp("rewrites", "rewritten")
	wantCode(t, "import an application whose set rewrites the ledger", err, wire.MigrationRequired)
	if _, err := b.c.Read(context.Background(), b.addr("SQLiteMigrationApplication", "rewrites")); err == nil {
		t.Error("the refused import adopted the application")
	}
	wantLedger(t, "after the refused import", b.ledgerOf(db.Metadata.UID), entriesOf(sql0001))
}
