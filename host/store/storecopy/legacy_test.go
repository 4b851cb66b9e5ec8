package storecopy_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/storecopy"
)

// legacyFile writes a host file holding one resource, then runs stmts on
// it as an older host could have left it (SQLite keeps any bytes in
// TEXT; today's host refuses them before any store sees them).
func legacyFile(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "host.db")
	oneResource(t, path)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// idempotencyRow inserts a replay record whose space and key are SQL
// expressions.
func idempotencyRow(space, key string) string {
	return `INSERT INTO idempotency (tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at)
		VALUES ('acme', 'p', ` + space + `, ` + key + `, 'f', 400, '', x'7b7d', '', '', 0)`
}

// Replay records an older host kept under an Idempotency-Key or a space
// that is not UTF-8 (caf\xe9, \xff\xfe) or holds a NUL cannot be carried
// to PostgreSQL: the copy leaves them behind and lists each, naming its
// key, column and what it holds, and carries everything else — the
// resource and the well-formed record — verified as always.
func TestCopyLeavesUncarriableReplayRecords(t *testing.T) {
	target := pgtest.URL(t)
	path := legacyFile(t,
		idempotencyRow("'prod'", "'good-key'"),
		idempotencyRow("'prod'", "CAST(x'636166e9' AS TEXT)"),
		idempotencyRow("'prod'", "CAST(x'fffe' AS TEXT)"),
		idempotencyRow("CAST(x'e9' AS TEXT)", "'k'"),
		idempotencyRow("'prod'", "CAST(x'6100' AS TEXT)"),
	)
	tables, err := storecopy.Copy(context.Background(), path, target)
	if err != nil {
		t.Fatalf("Copy of a file holding uncarriable replay records: %v", err)
	}
	byName := map[string]storecopy.Table{}
	for _, tb := range tables {
		byName[tb.Name] = tb
		if tb.Name != "idempotency" && len(tb.Left) > 0 {
			t.Errorf("left rows of %s behind: %+v", tb.Name, tb.Left)
		}
	}
	idem := byName["idempotency"]
	if idem.Rows != 1 || byName["resources"].Rows != 1 {
		t.Errorf("copied %d idempotency records and %d resources, want 1 and 1", idem.Rows, byName["resources"].Rows)
	}
	want := []storecopy.LeftRow{
		{Key: `lane="forms.takoform.com/v1alpha3" tenant="acme" principal="p" space="prod" key="a\x00"`, Column: "key", Reason: "a NUL (U+0000)"},
		{Key: `lane="forms.takoform.com/v1alpha3" tenant="acme" principal="p" space="prod" key="caf\xe9"`, Column: "key", Reason: "bytes that are not UTF-8"},
		{Key: `lane="forms.takoform.com/v1alpha3" tenant="acme" principal="p" space="prod" key="\xff\xfe"`, Column: "key", Reason: "bytes that are not UTF-8"},
		{Key: `lane="forms.takoform.com/v1alpha3" tenant="acme" principal="p" space="\xe9" key="k"`, Column: "space", Reason: "bytes that are not UTF-8"},
	}
	if !reflect.DeepEqual(idem.Left, want) {
		t.Errorf("left behind:\n got  %+v\n want %+v", idem.Left, want)
	}
	if storecopy.LeftMeans("idempotency") == "" {
		t.Error("LeftMeans says nothing of an idempotency record left behind")
	}
	st, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var keys []string
	rows, err := st.Pool().Query(context.Background(), `SELECT key FROM idempotency`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if rows.Close(); rows.Err() != nil || !reflect.DeepEqual(keys, []string{"good-key"}) {
		t.Errorf("the target holds replay records %q (%v), want only good-key", keys, rows.Err())
	}
}

// A resource row PostgreSQL cannot hold (a native id with a NUL, which an
// older host accepted on import) is state, not a replay record: the copy
// fails naming the row, its column and the repair, and the target stays
// empty.
func TestCopyRefusesAnUncarriableResource(t *testing.T) {
	target := pgtest.URL(t)
	path := legacyFile(t, `UPDATE resources SET native_id = CAST(x'6100' AS TEXT)`)
	_, err := storecopy.Copy(context.Background(), path, target)
	if err == nil {
		t.Fatal("Copy of a resource whose native id holds a NUL succeeded")
	}
	for _, want := range []string{"copy table resources", `uid="u-1"`, "native_id", "a NUL (U+0000)", "nothing was committed", "import it again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	pgtest.NoPassword(t, target, "the refusal", err.Error())
	st, err := postgres.Open(context.Background(), target, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM resources`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the failed copy left %d resources in the target", n)
	}
}
