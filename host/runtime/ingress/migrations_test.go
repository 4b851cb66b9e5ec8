package ingress_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// notesSource answers every request with the names in the migrated
// table notes, in id order, as a JSON array.
var notesSource = []byte(`export default {
  async fetch(request, env) {
    const r = await env.DB.query("SELECT name FROM notes ORDER BY id");
    return Response.json(r.rows.map((row) => row.name));
  },
};
`)

// sqlFile is one migration file of a MigrationBundle.
type sqlFile struct{ path, sql string }

// TestMigrationsRunOnTheDataPlane: on a host with a data plane, committing
// a v1beta1 SQLiteMigrationApplication runs the set's unapplied files on
// the database's own file, each with its in-file ledger row, and the
// store's ledger follows (spec/runtime-v1.md §9.3, spec/lane-v1beta1.md
// §6.7 rule 2; repo decision 0057), all through the Host API of the
// built-in family's lane v1beta1 and a worker bound to the database:
//
//   - an application of two files applies both, renders Ready, and the
//     worker reads the row the second inserted;
//   - a set whose third file fails is refused invalid_argument
//     migration_failed naming the file and SQLite's message; nothing of
//     the file is applied (its first statement rolled back too), the
//     store ledger stays at 2, the application is not created; a
//     corrected set resumes there;
//   - a set whose fourth file applies and fifth fails leaves the fourth
//     applied in the database file (the refusal says so) while the store
//     ledger keeps 3; a set rewriting that fourth file passes the store's
//     prefix check but not the file's (migration_required, nothing runs);
//     the corrected set catches the store ledger up without running the
//     fourth again;
//   - after a simulated crash between a file's commit and the store's
//     (the data plane ran the sixth file, the store never recorded it),
//     the retry runs nothing again and the store ledger catches up.
func TestMigrationsRunOnTheDataPlane(t *testing.T) {
	bin := enginetest.Binary(t)
	h, front := startHost(t, bin)
	ctx := context.Background()
	creds := conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}
	e, err := conformance.NewEnvOptions(ctx, h.URL, creds, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	hostname, dbUID := deployV1beta1(t, e, cat, e.Space, e.Name("notes"), notesSource)
	refs := map[string]form.FormRef{}
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.APIVersion == edge.GroupV1beta1 {
			refs[r.Kind] = r
		}
	}
	rel := func(kind, name string) map[string]any {
		return map[string]any{"apiVersion": edge.GroupV1beta1, "kind": kind, "name": name}
	}
	var dbName string
	if err := h.Store.View(ctx, func(tx store.Tx) error {
		r, err := tx.ResourceByUID(dbUID)
		if err == nil {
			dbName = r.Name
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// apply uploads files as one MigrationBundle, creates its set and an
	// application of it on the database.
	apply := func(name string, files ...sqlFile) (*wire.Resource, error) {
		t.Helper()
		m := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: artifact.KindMigrationBundle}
		blobs := map[string][]byte{}
		for _, f := range files {
			d := ijson.SumDigest([]byte(f.sql))
			m.Files = append(m.Files, wire.ManifestFile{Path: f.path, MediaType: artifact.MediaTypeSQL, Size: int64(len(f.sql)), Digest: d})
			blobs[d] = []byte(f.sql)
		}
		digest, err := e.A1.UploadArtifact(ctx, m, blobs)
		if err != nil {
			t.Fatalf("upload the MigrationBundle of %s: %v", name, err)
		}
		if _, err := e.Apply(ctx, e.A1, e.RequestIn(e.Space, refs["SQLiteMigrationSet"], "set-"+name, map[string]any{"manifestDigest": digest}), nil); err != nil {
			t.Fatalf("create the SQLiteMigrationSet of %s: %v", name, err)
		}
		return e.Apply(ctx, e.A1, e.RequestIn(e.Space, refs["SQLiteMigrationApplication"], "app-"+name, map[string]any{
			"database": rel("SQLiteDatabase", dbName), "migrationSet": rel("SQLiteMigrationSet", "set-"+name)}), nil)
	}
	ledgers := func() (storeLen int, inFile []gateway.LedgerEntry) {
		t.Helper()
		if err := h.Store.View(ctx, func(tx store.Tx) error {
			l, err := tx.MigrationLedger(dbUID)
			storeLen = len(l)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		inFile, err := h.Gateway.Ledger(ctx, dbUID)
		if err != nil {
			t.Fatal(err)
		}
		return storeLen, inFile
	}
	wantLedgers := func(what string, wantStore, wantFile int) []gateway.LedgerEntry {
		t.Helper()
		s, f := ledgers()
		if s != wantStore || len(f) != wantFile {
			t.Fatalf("%s: the store ledger holds %d entries and the database file's %d; want %d and %d", what, s, len(f), wantStore, wantFile)
		}
		return f
	}
	wantReadyApp := func(what string, res *wire.Resource, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, c := range res.Status.Conditions {
			if c.Type == "Ready" && (c.Status != "True" || c.Reason != "Available") {
				t.Errorf("%s: Ready=%s/%s (%s), want True/Available", what, c.Status, c.Reason, c.HostReason)
			}
		}
	}
	wantFailed := func(what string, err error, file, sqliteMsg string) *wire.Error {
		t.Helper()
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != wire.InvalidArgument || we.HostCode != "migration_failed" ||
			!strings.Contains(we.Message, file) || !strings.Contains(we.Message, sqliteMsg) {
			t.Fatalf("%s: %v; want invalid_argument migration_failed naming %s and %q", what, err, file, sqliteMsg)
		}
		t.Logf("%s: %s", what, we.Message)
		return we
	}
	wantNames := func(what, want string) {
		t.Helper()
		if got := waitBody(t, front, hostname, func(b string) bool { return b == want }); got != want {
			t.Fatalf("%s: the worker reads %s, want %s", what, got, want)
		}
	}

	f1 := sqlFile{"0001_notes.sql", "CREATE TABLE notes (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"}
	f2 := sqlFile{"0002_first.sql", "INSERT INTO notes (name) VALUES ('first');\n"}
	res, err := apply("two", f1, f2)
	wantReadyApp("an application of two files", res, err)
	wantLedgers("after two files", 2, 2)
	wantNames("after two files", `["first"]`)

	broken := sqlFile{"0003_third.sql", "INSERT INTO notes (name) VALUES ('lost');\nINSERT INTO missing_table VALUES (1);\n"}
	_, err = apply("broken", f1, f2, broken)
	wantFailed("a failing third file", err, "0003_third.sql", "no such table: missing_table")
	wantLedgers("after the failing third file", 2, 2)
	if _, err := e.A1.Read(ctx, client.Address{Space: e.Space, Ref: refs["SQLiteMigrationApplication"], Name: "app-broken"}); err == nil {
		t.Error("the refused application was created")
	}
	f3 := sqlFile{"0003_third.sql", "INSERT INTO notes (name) VALUES ('third');\n"}
	res, err = apply("fixed", f1, f2, f3)
	wantReadyApp("the corrected set", res, err)
	wantLedgers("after the corrected set", 3, 3)
	wantNames("after the corrected set", `["first","third"]`)

	f4 := sqlFile{"0004_fourth.sql", "INSERT INTO notes (name) VALUES ('fourth');\n"}
	bad5 := sqlFile{"0005_fifth.sql", "INSERT INTO notes (nope) VALUES ('fifth');\n"}
	_, err = apply("partial", f1, f2, f3, f4, bad5)
	if we := wantFailed("a failing fifth file after a good fourth", err, "0005_fifth.sql", "no column named nope"); !strings.Contains(we.Message, "holds 4 of the set's 5 files") {
		t.Errorf("the refusal does not say the fourth file stays applied: %s", we.Message)
	}
	wantLedgers("after the failing fifth file", 3, 4)
	// The store ledger (3) is a prefix of a set that rewrites the fourth
	// file, but the database file's is not: migration_required, nothing
	// runs.
	other4 := sqlFile{"0004_fourth.sql", "INSERT INTO notes (name) VALUES ('other');\n"}
	_, err = apply("diverging", f1, f2, f3, other4)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.MigrationRequired || !strings.Contains(we.Message, "0004_fourth.sql") {
		t.Fatalf("a set rewriting a file only the database file's ledger holds: %v, want migration_required naming it", err)
	}
	t.Logf("a diverging set: %s", we.Message)
	wantLedgers("after the diverging set", 3, 4)
	f5 := sqlFile{"0005_fifth.sql", "INSERT INTO notes (name) VALUES ('fifth');\n"}
	res, err = apply("resumed", f1, f2, f3, f4, f5)
	wantReadyApp("the set resuming after the fourth file", res, err)
	wantLedgers("after the resumed set", 5, 5)
	wantNames("after the resumed set", `["first","third","fourth","fifth"]`)

	// A crash between the database file's commit and the store's: the
	// data plane ran the sixth file, the store never recorded it.
	f6 := sqlFile{"0006_sixth.sql", "INSERT INTO notes (name) VALUES ('sixth');\n"}
	var files []gateway.MigrationFile
	for _, f := range []sqlFile{f1, f2, f3, f4, f5, f6} {
		files = append(files, gateway.MigrationFile{Path: f.path, Digest: ijson.SumDigest([]byte(f.sql)), SQL: f.sql})
	}
	if _, err := h.Gateway.ApplyMigrations(ctx, dbUID, files); err != nil {
		t.Fatal(err)
	}
	before := wantLedgers("after the crash", 5, 6)
	res, err = apply("after-crash", f1, f2, f3, f4, f5, f6)
	wantReadyApp("the retry after the crash", res, err)
	after := wantLedgers("after the retry", 6, 6)
	if !after[5].AppliedAt.Equal(before[5].AppliedAt) {
		t.Errorf("the retry ran the sixth file again: applied at %s, then %s", before[5].AppliedAt, after[5].AppliedAt)
	}
	wantNames("after the retry", `["first","third","fourth","fifth","sixth"]`)
}
