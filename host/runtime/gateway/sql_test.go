package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
)

type sqlResult struct {
	Rows            []map[string]map[string]any `json:"rows"`
	RowsWritten     int64                       `json:"rowsWritten"`
	LastInsertRowID *string                     `json:"lastInsertRowId"`
}

// sqlCall sends op with body to uid's database and returns the answer.
func (f *fixture) sqlCall(t *testing.T, op, uid string, body any) answer {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return f.do(t, "POST", "/sql/v1/"+op, b, nil, uid)
}

// sql runs one statement with op and wants success.
func (f *fixture) sql(t *testing.T, op, text string, params ...any) sqlResult {
	t.Helper()
	a := f.sqlCall(t, op, "uid-sql", map[string]any{"sql": text, "params": params})
	if a.status != 200 {
		t.Fatalf("%s %q: %d %s", op, text, a.status, a.body)
	}
	var r sqlResult
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// sqlRefused runs one statement with op and wants sql_error.
func (f *fixture) sqlRefused(t *testing.T, op, text string, params ...any) string {
	t.Helper()
	a := f.sqlCall(t, op, "uid-sql", map[string]any{"sql": text, "params": params})
	if a.status != 400 || a.code() != "sql_error" {
		t.Errorf("%s %.60q: %d %s; want 400 sql_error", op, text, a.status, a.body)
	}
	return string(a.body)
}

func tagged(typ string, v any) map[string]any {
	if typ == "blob" {
		return map[string]any{"type": "blob", "base64": v}
	}
	if typ == "null" {
		return map[string]any{"type": "null"}
	}
	return map[string]any{"type": typ, "value": v}
}

func TestSQLCreateInsertSelect(t *testing.T) {
	f := newFixture(t)
	r := f.sql(t, "execute", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
	if len(r.Rows) != 0 || r.RowsWritten != 0 || r.LastInsertRowID != nil {
		t.Errorf("create: %+v", r)
	}
	r = f.sql(t, "execute", "INSERT INTO notes (body) VALUES (?1)", tagged("text", "first note"))
	if r.RowsWritten != 1 || r.LastInsertRowID == nil || *r.LastInsertRowID != "1" {
		t.Errorf("insert: %+v", r)
	}
	r = f.sql(t, "query", "SELECT body FROM notes ORDER BY id")
	if len(r.Rows) != 1 || r.Rows[0]["body"]["type"] != "text" || r.Rows[0]["body"]["value"] != "first note" || r.RowsWritten != 0 {
		t.Errorf("select: %+v", r)
	}
	r = f.sql(t, "execute", "UPDATE notes SET body = body || '!'")
	if r.RowsWritten != 1 || r.LastInsertRowID != nil {
		t.Errorf("update: %+v", r)
	}
	r = f.sql(t, "execute", "CREATE INDEX notes_body ON notes (body)")
	if r.RowsWritten != 0 {
		t.Errorf("a schema change after an update reports %d rows written; want 0", r.RowsWritten)
	}
	path := gateway.SQLitePath(f.dataDir, "uid-sql")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the database file %s: %v, mode %v; want 0600", path, err, fi)
	}
}

func TestSQLTaggedValuesRoundTrip(t *testing.T) {
	f := newFixture(t)
	f.sql(t, "execute", "CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB, n TEXT, d DATETIME)")
	f.sql(t, "execute", "INSERT INTO v VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		tagged("integer", "9223372036854775807"), tagged("real", 1.5), tagged("text", "é😀\x00x"),
		tagged("blob", "AAECf3/+/1RBS09GT1JN"), tagged("null", nil), tagged("text", "2026-12-02 08:00:00"))
	f.sql(t, "execute", "INSERT INTO v (i, b) VALUES (?1, ?2)", tagged("integer", "-9223372036854775808"), tagged("blob", ""))
	r := f.sql(t, "query", "SELECT i, r, t, b, n, d FROM v ORDER BY rowid")
	got, _ := json.Marshal(r.Rows)
	want := `[{"b":{"base64":"AAECf3/+/1RBS09GT1JN","type":"blob"},"d":{"type":"text","value":"2026-12-02 08:00:00"},` +
		`"i":{"type":"integer","value":"9223372036854775807"},"n":{"type":"null"},"r":{"type":"real","value":1.5},` +
		`"t":{"type":"text","value":"é😀\u0000x"}},` +
		`{"b":{"base64":"","type":"blob"},"d":{"type":"null"},"i":{"type":"integer","value":"-9223372036854775808"},` +
		`"n":{"type":"null"},"r":{"type":"null"},"t":{"type":"null"}}]`
	if string(got) != want {
		t.Errorf("rows:\n got  %s\n want %s", got, want)
	}
	for name, p := range map[string]any{
		"a leading zero":            tagged("integer", "01"),
		"a plus sign":               tagged("integer", "+1"),
		"past int64":                tagged("integer", "9223372036854775808"),
		"an integer as a number":    tagged("integer", 1),
		"a real as a string":        tagged("real", "1.5"),
		"an unknown type":           tagged("bool", true),
		"an extra member":           map[string]any{"type": "null", "value": 1},
		"a blob that is not base64": tagged("blob", "!!"),
		"unpadded base64":           tagged("blob", "AA"),
		"a bare JSON scalar":        "x",
		"a text of 1000001 chars":   tagged("text", strings.Repeat("a", 1000001)),
	} {
		if body := f.sqlRefused(t, "execute", "SELECT ?1", p); !strings.Contains(body, "params[0]") {
			t.Errorf("%s: the refusal names no parameter: %s", name, body)
		}
	}
}

func TestSQLExactlyOneStatement(t *testing.T) {
	f := newFixture(t)
	f.sql(t, "execute", "CREATE TABLE t (x INTEGER);")
	f.sql(t, "execute", "INSERT INTO t VALUES (1); -- a comment after the end")
	f.sql(t, "execute", "INSERT INTO t VALUES (2) /* ; */")
	f.sql(t, "query", "SELECT ';' AS semi")
	f.sql(t, "execute", "CREATE TRIGGER t_double AFTER INSERT ON t BEGIN INSERT INTO t VALUES (NEW.x * 100) ; SELECT 1; END")
	for _, text := range []string{
		"INSERT INTO t VALUES (3); INSERT INTO t VALUES (4)",
		"SELECT 1; SELECT 2",
		"SELECT 1; garbage",
		"   -- only a comment",
	} {
		f.sqlRefused(t, "execute", text)
	}
	r := f.sql(t, "query", "SELECT count(*) AS n FROM t")
	if r.Rows[0]["n"]["value"] != "2" {
		t.Errorf("rows after the refusals: %v; want 2 (nothing of a refused call ran)", r.Rows[0]["n"])
	}
}

func TestSQLRefusesWhatReachesTheHost(t *testing.T) {
	f := newFixture(t)
	f.sql(t, "execute", "CREATE TABLE t (x)")
	outside := filepath.Join(t.TempDir(), "copy.db")
	for _, text := range []string{
		"BEGIN", "BEGIN IMMEDIATE", "COMMIT", "END", "ROLLBACK", "SAVEPOINT s", "RELEASE s",
		"ATTACH '" + outside + "' AS other", "DETACH main",
		"SELECT load_extension('/tmp/x.so')",
		"PRAGMA journal_mode = WAL", "PRAGMA user_version = 3", "PRAGMA writable_schema = ON", "PRAGMA database_list",
		"PRAGMA temp_store_directory = '/tmp'",
		"VACUUM INTO '" + outside + "'",
		"CREATE TABLE _takoform_migrations (path TEXT)",
		"CREATE TABLE _TAKOFORM_x (path TEXT)",
	} {
		f.sqlRefused(t, "execute", text)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("a refused statement wrote %s", outside)
	}
	f.sql(t, "query", "PRAGMA table_info(t)")
	f.sql(t, "query", "PRAGMA user_version")
	// Every call is one transaction, where SQLite runs no VACUUM.
	f.sqlRefused(t, "execute", "VACUUM")
}

func TestSQLQueryRefusesWrites(t *testing.T) {
	f := newFixture(t)
	f.sql(t, "execute", "CREATE TABLE t (x)")
	for _, text := range []string{"INSERT INTO t VALUES (1)", "CREATE TABLE u (x)", "DELETE FROM t", "INSERT INTO t VALUES (1) RETURNING x"} {
		f.sqlRefused(t, "query", text)
	}
	if r := f.sql(t, "query", "SELECT count(*) AS n FROM t"); r.Rows[0]["n"]["value"] != "0" {
		t.Errorf("a refused query wrote: %v", r.Rows[0]["n"])
	}
	if r := f.sql(t, "execute", "INSERT INTO t VALUES (7) RETURNING x"); len(r.Rows) != 1 || r.RowsWritten != 1 {
		t.Errorf("execute INSERT … RETURNING: %+v", r)
	}
}

func TestSQLTransaction(t *testing.T) {
	f := newFixture(t)
	a := f.sqlCall(t, "transaction", "uid-sql", map[string]any{"statements": []any{
		map[string]any{"sql": "CREATE TABLE events (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"},
		map[string]any{"sql": "INSERT INTO events (n) VALUES (?1)", "params": []any{tagged("integer", "7")}},
		map[string]any{"sql": "SELECT n FROM events ORDER BY id"},
	}})
	want := `{"results":[{"rows":[],"rowsWritten":0},{"rows":[],"rowsWritten":1,"lastInsertRowId":"1"},{"rows":[{"n":{"type":"integer","value":"7"}}],"rowsWritten":0}]}`
	if a.status != 200 || strings.TrimSpace(string(a.body)) != want {
		t.Errorf("transaction: %d %s\nwant %s", a.status, a.body, want)
	}
	a = f.sqlCall(t, "transaction", "uid-sql", map[string]any{"statements": []any{
		map[string]any{"sql": "CREATE TABLE rolled_back (id INTEGER PRIMARY KEY)"},
		map[string]any{"sql": "INSERT INTO no_such_table (id) VALUES (1)"},
	}})
	if a.code() != "sql_error" || !strings.Contains(string(a.body), "statements[1]") {
		t.Errorf("a failing transaction: %d %s", a.status, a.body)
	}
	f.sqlRefused(t, "query", "SELECT id FROM rolled_back")
	many := make([]any, 101)
	for i := range many {
		many[i] = map[string]any{"sql": "SELECT 1"}
	}
	if a := f.sqlCall(t, "transaction", "uid-sql", map[string]any{"statements": many}); a.code() != "sql_error" {
		t.Errorf("101 statements: %d %s", a.status, a.body)
	}
	if a := f.sqlCall(t, "transaction", "uid-sql", map[string]any{"statements": []any{}}); a.code() != "invalid_argument" {
		t.Errorf("no statement: %d %s", a.status, a.body)
	}
}

func TestSQLLimits(t *testing.T) {
	f := newFixture(t)
	params := make([]any, 101)
	for i := range params {
		params[i] = tagged("null", nil)
	}
	f.sqlRefused(t, "query", "SELECT ?1", params...)
	f.sqlRefused(t, "query", "SELECT ?1, ?2", tagged("integer", "1"))
	f.sqlRefused(t, "query", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 10001) SELECT n FROM c")
	if r := f.sql(t, "query", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 10000) SELECT n FROM c"); len(r.Rows) != 10000 {
		t.Errorf("10000 rows: got %d", len(r.Rows))
	}
	cols := make([]string, 257)
	for i := range cols {
		cols[i] = fmt.Sprintf("%d AS c%d", i, i)
	}
	f.sqlRefused(t, "query", "SELECT "+strings.Join(cols, ", "))
	f.sql(t, "query", "SELECT "+strings.Join(cols[:256], ", "))
	f.sqlRefused(t, "query", "SELECT 1 AS a, 2 AS a")
	f.sqlRefused(t, "query", "SELECT 1 AS "+strings.Repeat("n", 129))
	f.sqlRefused(t, "query", "SELECT 1"+strings.Repeat(" ", 100000-7))
	f.sql(t, "query", "SELECT 1"+strings.Repeat(" ", 100000-8))
	f.sqlRefused(t, "query", "SELECT 1e999 AS inf")
	f.sqlRefused(t, "query", "SELECT CAST(x'ff' AS TEXT) AS bad")
}

// One file per SQLiteDatabase UID, reached only through that UID's binding
// of this tenant, removed once the resource is gone.
func TestSQLFilePerDatabase(t *testing.T) {
	f := newFixture(t)
	f.sql(t, "execute", "CREATE TABLE mine (x)")
	for name, uid := range map[string]string{"another tenant's database": "uid-sql-globex", "a KV namespace": "uid-kv", "an unknown UID": "uid-x"} {
		a := f.sqlCall(t, "execute", uid, map[string]any{"sql": "CREATE TABLE theirs (x)"})
		if a.status != 403 || a.code() != "backend_unavailable" {
			t.Errorf("%s: %d %s; want 403", name, a.status, a.body)
		}
	}
	for _, uid := range []string{"uid-sql-globex", "uid-kv", "uid-x"} {
		if _, err := os.Stat(gateway.SQLitePath(f.dataDir, uid)); err == nil {
			t.Errorf("a refused call created a database for %s", uid)
		}
	}
	if swept, err := f.gw.Sweep(context.Background(), 10); err != nil || swept["kv_entries"]+swept["sql_databases"] != 0 {
		t.Errorf("Sweep of live data removed %v (%v)", swept, err)
	}
	if err := f.st.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteResource("uid-sql") }); err != nil {
		t.Fatal(err)
	}
	if swept, err := f.gw.Sweep(context.Background(), 10); err != nil || swept["sql_databases"] != 1 {
		t.Errorf("Sweep after the delete removed %v (%v); want 1 database", swept, err)
	}
	if _, err := os.Stat(gateway.SQLitePath(f.dataDir, "uid-sql")); err == nil {
		t.Error("the deleted database's file is still there")
	}
}

// A database stops at the host's size limit with a clear sql_error, and
// the refused call applied nothing.
func TestSQLDatabaseSizeLimit(t *testing.T) {
	f := newFixture(t, gateway.WithSQLDatabaseLimit(64<<10))
	f.sql(t, "execute", "CREATE TABLE b (v BLOB)")
	f.sql(t, "execute", "INSERT INTO b VALUES (zeroblob(20000))")
	body := f.sqlRefused(t, "execute", "INSERT INTO b VALUES (zeroblob(100000))")
	if !strings.Contains(body, "limit of 65536 bytes per SQLite database") {
		t.Errorf("the refusal does not name the limit: %s", body)
	}
	if r := f.sql(t, "query", "SELECT count(*) AS n FROM b"); r.Rows[0]["n"]["value"] != "1" {
		t.Errorf("rows after the refused insert: %v; want 1", r.Rows[0]["n"])
	}
	f.sqlRefused(t, "execute", "PRAGMA max_page_count = 100000")
}
