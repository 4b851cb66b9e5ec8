package gateway_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/wire"
)

// TestApplyMigrationsFileAndLedgerInOneTransaction: each file and its
// ledger row commit together (spec/runtime-v1.md §9.3): a failing file
// leaves neither its effects nor its entry, the earlier files stay, and a
// retry resumes at that file without running the earlier ones again
// (their CREATE TABLE would fail).
func TestApplyMigrationsFileAndLedgerInOneTransaction(t *testing.T) {
	f := newFixture(t)
	f.addIn(t, edge.GroupV1beta1, gateway.KindSQL, betaDB, `{}`)
	ctx := t.Context()
	one := gateway.MigrationFile{Path: "0001.sql", Digest: "sha256:01", SQL: "CREATE TABLE t (n INTEGER, s TEXT, b BLOB);\nINSERT INTO t (n) VALUES (1);"}
	two := gateway.MigrationFile{Path: "0002.sql", Digest: "sha256:02", SQL: "CREATE TABLE u (x);"}
	bad := gateway.MigrationFile{Path: "0003.sql", Digest: "sha256:03", SQL: "CREATE TABLE w (y); INSERT INTO nowhere VALUES (1);"}
	applied, err := f.gw.ApplyMigrations(ctx, betaDB, []gateway.MigrationFile{one, two, bad})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.InvalidArgument || we.HostCode != "migration_failed" || !strings.Contains(we.Message, "0003.sql") || !strings.Contains(we.Message, "nowhere") {
		t.Fatalf("a failing third file: %v", err)
	}
	if len(applied) != 2 || applied[1].Path != "0002.sql" {
		t.Errorf("the ledger returned after the failure: %+v", applied)
	}
	ledger := func() []string {
		t.Helper()
		l, err := f.gw.Ledger(ctx, betaDB)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range l {
			out = append(out, e.Path+" "+e.Digest)
		}
		return out
	}
	if got := strings.Join(ledger(), ","); got != "0001.sql sha256:01,0002.sql sha256:02" {
		t.Errorf("ledger after the failure: %s", got)
	}
	if got := f.betaOK(t, "query", "SELECT name FROM sqlite_schema WHERE name = 'w'"); got != `{"rows":[],"rowsWritten":0}` {
		t.Errorf("the failed file's table exists: %s", got)
	}
	fixed := gateway.MigrationFile{Path: "0003.sql", Digest: "sha256:03b", SQL: "CREATE TABLE w (y); INSERT INTO w VALUES (1);"}
	applied, err = f.gw.ApplyMigrations(ctx, betaDB, []gateway.MigrationFile{one, two, fixed})
	if err != nil || len(applied) != 3 || applied[2].Digest != "sha256:03b" {
		t.Fatalf("the retry: %+v %v", applied, err)
	}
	if got := f.betaOK(t, "query", "SELECT (SELECT count(*) FROM t) AS t, (SELECT count(*) FROM w) AS w"); got != `{"rows":[{"t":1,"w":1}],"rowsWritten":0}` {
		t.Errorf("after the retry: %s", got)
	}
	again, err := f.gw.ApplyMigrations(ctx, betaDB, []gateway.MigrationFile{one, two, fixed})
	if err != nil || len(again) != 3 || !again[2].AppliedAt.Equal(applied[2].AppliedAt) {
		t.Errorf("a second apply of the same set runs nothing: %+v %v", again, err)
	}
	for name, set := range map[string][]gateway.MigrationFile{
		"a shorter set":     {one, two},
		"an edited file":    {one, {Path: "0002.sql", Digest: "sha256:02x", SQL: two.SQL}, fixed},
		"another file path": {one, {Path: "0002b.sql", Digest: "sha256:02", SQL: two.SQL}, fixed},
	} {
		if l, err := f.gw.ApplyMigrations(ctx, betaDB, set); !errors.As(err, &we) || we.Code != wire.MigrationRequired || len(l) != 3 {
			t.Errorf("%s: %v (ledger %d entries), want migration_required and the 3 entries", name, err, len(l))
		}
	}
	if got := len(ledger()); got != 3 {
		t.Errorf("refused sets changed the ledger: %d entries", got)
	}
}

// TestApplyMigrationsRefusals: a file may not control the transaction,
// attach, or touch the ledger; each refusal names the file and leaves
// nothing.
func TestApplyMigrationsRefusals(t *testing.T) {
	f := newFixture(t)
	f.addIn(t, edge.GroupV1beta1, gateway.KindSQL, betaDB, `{}`)
	for _, sql := range []string{
		"CREATE TABLE a (x); COMMIT; CREATE TABLE b (x);",
		"BEGIN; CREATE TABLE a (x);",
		"CREATE TABLE a (x); SAVEPOINT s;",
		"ATTACH DATABASE 'x.db' AS x;",
		"CREATE TABLE a (x); DELETE FROM " + gateway.LedgerTable + ";",
		"PRAGMA journal_mode = DELETE;",
	} {
		_, err := f.gw.ApplyMigrations(t.Context(), betaDB, []gateway.MigrationFile{{Path: "m.sql", Digest: "sha256:m", SQL: sql}})
		var we *wire.Error
		if !errors.As(err, &we) || we.HostCode != "migration_failed" || !strings.Contains(we.Message, "m.sql") {
			t.Errorf("%q: %v", sql, err)
		}
	}
	if l, err := f.gw.Ledger(t.Context(), betaDB); err != nil || len(l) != 0 {
		t.Errorf("ledger after refused files: %+v %v", l, err)
	}
	if got := f.betaOK(t, "query", "SELECT count(*) AS n FROM sqlite_schema WHERE name NOT LIKE '\\_takoform%' ESCAPE '\\'"); got != `{"rows":[{"n":0}],"rowsWritten":0}` {
		t.Errorf("refused files left schema: %s", got)
	}
}

// TestApplyMigrationsPastTheSizeLimit: a file that fills the database
// fails migration_failed saying so, and leaves nothing.
func TestApplyMigrationsPastTheSizeLimit(t *testing.T) {
	f := newFixture(t, gateway.WithSQLDatabaseLimit(16*4096))
	f.addIn(t, edge.GroupV1beta1, gateway.KindSQL, betaDB, `{}`)
	_, err := f.gw.ApplyMigrations(t.Context(), betaDB, []gateway.MigrationFile{{Path: "big.sql", Digest: "sha256:b",
		SQL: "CREATE TABLE big (b BLOB); INSERT INTO big WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 100) SELECT zeroblob(4096) FROM c;"}})
	var we *wire.Error
	if !errors.As(err, &we) || we.HostCode != "migration_failed" || !strings.Contains(we.Message, "size limit") {
		t.Fatalf("a file past the size limit: %v", err)
	}
	if l, err := f.gw.Ledger(t.Context(), betaDB); err != nil || len(l) != 0 {
		t.Errorf("ledger: %+v %v", l, err)
	}
}
