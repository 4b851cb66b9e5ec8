package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/gateway"
)

// betaDB is the v1beta1 SQLiteDatabase the tests below add.
const betaDB = "uid-sql-beta"

// newBetaFixture is newFixture plus the v1beta1 SQLiteDatabase betaDB,
// whose schema (a table t of n INTEGER, s TEXT, b BLOB) comes from a
// migration, the only way a v1beta1 schema changes.
func newBetaFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.addIn(t, edge.GroupV1beta1, gateway.KindSQL, betaDB, `{}`)
	if _, err := f.gw.ApplyMigrations(t.Context(), betaDB, []gateway.MigrationFile{
		{Path: "0001.sql", Digest: "sha256:01", SQL: "CREATE TABLE t (n INTEGER, s TEXT, b BLOB);"},
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// beta sends op with body to betaDB on the v1beta1 route.
func (f *fixture) beta(t *testing.T, op string, body any) answer {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return f.do(t, "POST", "/sql/v1beta1/"+op, b, nil, betaDB)
}

// betaOK runs one statement and wants success; it returns the raw answer.
func (f *fixture) betaOK(t *testing.T, op, text string, params ...any) string {
	t.Helper()
	a := f.beta(t, op, map[string]any{"sql": text, "params": params})
	if a.status != 200 {
		t.Fatalf("%s %.80q: %d %s", op, text, a.status, a.body)
	}
	return strings.TrimSpace(string(a.body))
}

// betaRefused runs one statement and wants the error code.
func (f *fixture) betaRefused(t *testing.T, code, op, text string, params ...any) string {
	t.Helper()
	a := f.beta(t, op, map[string]any{"sql": text, "params": params})
	if a.status != 400 || a.code() != code {
		t.Errorf("%s %.80q: %d %.300s; want 400 %s", op, text, a.status, a.body, code)
	}
	return string(a.body)
}

// count is the rows of t.
func (f *fixture) count(t *testing.T) string {
	t.Helper()
	return f.betaOK(t, "query", "SELECT count(*) AS c FROM t")
}

// TestSQLV1beta1Values: the fixtures of the v1beta1 edge.sql Interface
// (forms/edge/family-v1beta1/interfaces/edge.sql) and more: untagged
// values round-trip, answered as canonical JSON, with no lastInsertRowId.
func TestSQLV1beta1Values(t *testing.T) {
	f := newBetaFixture(t)
	for _, c := range []struct {
		op, sql string
		params  []any
		want    string
	}{
		{"execute", "SELECT ?1 AS n, ?2 AS t, ?3 AS b, ?4 AS z", []any{1.5, "first note", map[string]any{"encoding": "base64", "data": "AAECg/8="}, nil},
			`{"rows":[{"b":{"data":"AAECg/8=","encoding":"base64"},"n":1.5,"t":"first note","z":null}],"rowsWritten":0}`},
		{"query", "SELECT ?1 AS v", []any{9007199254740991}, `{"rows":[{"v":9007199254740991}],"rowsWritten":0}`},
		{"query", "SELECT ?1 AS v, typeof(?1) AS k", []any{-9007199254740991}, `{"rows":[{"k":"integer","v":-9007199254740991}],"rowsWritten":0}`},
		{"query", "SELECT ?1 AS v, typeof(?1) AS k", []any{2.0}, `{"rows":[{"k":"integer","v":2}],"rowsWritten":0}`},
		{"query", "SELECT 1e-7 AS small, 0.1 + 0.2 AS sum, -0.0 AS z, 'é😀' AS u, x'' AS e", nil,
			`{"rows":[{"e":{"data":"","encoding":"base64"},"small":1e-7,"sum":0.30000000000000004,"u":"é😀","z":0}],"rowsWritten":0}`},
		// RFC 8785 orders members by UTF-16 code units: U+1F600 (a surrogate
		// pair) before U+FFFD, unlike UTF-8 byte order
		{"query", "SELECT 4 AS \"\uFFFD\", 3 AS \"😀\", 2 AS \"é\", 1 AS z", nil, "{\"rows\":[{\"z\":1,\"é\":2,\"😀\":3,\"\uFFFD\":4}],\"rowsWritten\":0}"},
		{"execute", "INSERT INTO t (n, s) VALUES (?1, ?2)", []any{7, "x"}, `{"rows":[],"rowsWritten":1}`},
		{"execute", "UPDATE t SET n = n + 1 RETURNING n", nil, `{"rows":[{"n":8}],"rowsWritten":1}`},
	} {
		if got := f.betaOK(t, c.op, c.sql, c.params...); got != c.want {
			t.Errorf("%s %q:\n got  %s\n want %s", c.op, c.sql, got, c.want)
		}
	}
	a := f.beta(t, "transaction", map[string]any{"statements": []any{
		map[string]any{"sql": "SELECT ?1 AS n", "params": []any{7}},
		map[string]any{"sql": "SELECT ?1 AS t", "params": []any{"done"}},
	}})
	if got, want := strings.TrimSpace(string(a.body)), `{"results":[{"rows":[{"n":7}],"rowsWritten":0},{"rows":[{"t":"done"}],"rowsWritten":0}]}`; got != want {
		t.Errorf("transaction: %d\n got  %s\n want %s", a.status, got, want)
	}
	for name, p := range map[string]any{
		"a tagged value":       map[string]any{"type": "integer", "value": "1"},
		"a boolean":            true,
		"an array":             []any{1},
		"an extra blob member": map[string]any{"encoding": "base64", "data": "AA==", "x": 1},
		"another encoding":     map[string]any{"encoding": "hex", "data": "00"},
		"invalid base64":       map[string]any{"encoding": "base64", "data": "!!"},
		"unpadded base64":      map[string]any{"encoding": "base64", "data": "AA"},
		"a 1000001-byte text":  strings.Repeat("é", 500000) + "a",
		"a 1000001-byte blob":  map[string]any{"encoding": "base64", "data": strings.Repeat("AAAA", 333334)},
	} {
		if body := f.betaRefused(t, "sql_error", "execute", "SELECT ?1 AS v", p); !strings.Contains(body, "params[0]") {
			t.Errorf("%s: the refusal names no parameter: %s", name, body)
		}
	}
	f.betaOK(t, "query", "SELECT ?1 AS v", strings.Repeat("é", 500000))
}

// TestSQLV1beta1NumericOutOfRange: a number outside ±(2^53-1), given or
// produced, fails numeric_out_of_range, and an execute that would have
// produced one leaves the database unchanged.
func TestSQLV1beta1NumericOutOfRange(t *testing.T) {
	f := newBetaFixture(t)
	for _, p := range []json.Number{"9007199254740992", "-9007199254740992", "1e400", "9223372036854775808", "1e16"} {
		f.betaRefused(t, "numeric_out_of_range", "query", "SELECT ?1 AS v", p)
	}
	for _, q := range []string{"SELECT 9007199254740992 AS v", "SELECT -9007199254740992 AS v", "SELECT 1e300 AS v", "SELECT 1e999 AS v", "SELECT -1e999 AS v"} {
		f.betaRefused(t, "numeric_out_of_range", "query", q)
	}
	f.betaRefused(t, "numeric_out_of_range", "execute", "INSERT INTO t (n) VALUES (9007199254740992) RETURNING n")
	if got := f.count(t); got != `{"rows":[{"c":0}],"rowsWritten":0}` {
		t.Errorf("after a refused insert: %s", got)
	}
	if got := f.betaOK(t, "query", "SELECT CAST(9007199254740992 AS TEXT) AS v"); got != `{"rows":[{"v":"9007199254740992"}],"rowsWritten":0}` {
		t.Errorf("a big integer read as TEXT: %s", got)
	}
}

// TestSQLV1beta1Refusals: one statement per call, no transaction control,
// no schema change at runtime, nothing that reaches the host.
func TestSQLV1beta1Refusals(t *testing.T) {
	f := newBetaFixture(t)
	for _, q := range []string{
		"SELECT 1; SELECT 2",
		"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT s", "RELEASE s",
		"CREATE TABLE forbidden_runtime_schema (id INTEGER PRIMARY KEY)",
		"CREATE TEMP TABLE tmp (x)", "CREATE INDEX i ON t (n)", "CREATE VIEW v AS SELECT 1", "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
		"DROP TABLE t", "ALTER TABLE t ADD COLUMN y", "ALTER TABLE t RENAME TO u", "ANALYZE",
		"ATTACH DATABASE 'x.db' AS x", "PRAGMA user_version = 3", "PRAGMA journal_mode = DELETE",
		"SELECT * FROM " + gateway.LedgerTable, "DELETE FROM " + gateway.LedgerTable,
		"SELECT load_extension('x')",
	} {
		for _, op := range []string{"execute", "query"} {
			f.betaRefused(t, "sql_error", op, q)
		}
	}
	body := f.betaRefused(t, "sql_error", "execute", "CREATE TABLE x (y)")
	if !strings.Contains(body, "SQLiteMigrationApplication") {
		t.Errorf("the schema refusal does not say how to change the schema: %s", body)
	}
	f.betaOK(t, "execute", "INSERT INTO t (n) VALUES (1); -- a comment after the end")
	f.betaOK(t, "query", "PRAGMA table_info(t)")
}

// TestSQLV1beta1QueryRollsBack: query runs a writing statement and rolls
// it back; its rowsWritten is 0.
func TestSQLV1beta1QueryRollsBack(t *testing.T) {
	f := newBetaFixture(t)
	if got := f.betaOK(t, "query", "INSERT INTO t (n) VALUES (1), (2) RETURNING n"); got != `{"rows":[{"n":1},{"n":2}],"rowsWritten":0}` {
		t.Errorf("a writing query: %s", got)
	}
	if got := f.count(t); got != `{"rows":[{"c":0}],"rowsWritten":0}` {
		t.Errorf("after a writing query the table holds: %s", got)
	}
	f.betaOK(t, "execute", "INSERT INTO t (n) VALUES (1)")
	if got := f.count(t); got != `{"rows":[{"c":1}],"rowsWritten":0}` {
		t.Errorf("after execute: %s", got)
	}
}

// TestSQLV1beta1TransactionIsAllOrNothing: a failing statement, or a
// number out of range in a later one, rolls back the earlier ones.
func TestSQLV1beta1TransactionIsAllOrNothing(t *testing.T) {
	f := newBetaFixture(t)
	for _, second := range []string{"INSERT INTO nowhere VALUES (1)", "SELECT 9007199254740992 AS v", "CREATE TABLE x (y)"} {
		a := f.beta(t, "transaction", map[string]any{"statements": []any{
			map[string]any{"sql": "INSERT INTO t (n) VALUES (1)"},
			map[string]any{"sql": second},
		}})
		if a.status != 400 || !strings.Contains(string(a.body), "statements[1]") {
			t.Errorf("transaction ending in %q: %d %s", second, a.status, a.body)
		}
	}
	if got := f.count(t); got != `{"rows":[{"c":0}],"rowsWritten":0}` {
		t.Errorf("after failed transactions: %s", got)
	}
}

// TestSQLV1beta1Limits: each byte limit of the v1beta1 edge.sql, exactly,
// and an exceeded output limit leaves the database unchanged.
func TestSQLV1beta1Limits(t *testing.T) {
	f := newBetaFixture(t)
	// statement bytes: 'é' is two bytes
	f.betaOK(t, "query", "SELECT 1 AS v"+strings.Repeat(" ", gateway.MaxSQLStatementBytesV1beta1-13))
	f.betaRefused(t, "sql_error", "query", "SELECT '"+strings.Repeat("é", gateway.MaxSQLStatementBytesV1beta1/2)+"' AS v")
	cols := make([]string, gateway.MaxSQLColumnsV1beta1+1)
	for i := range cols {
		cols[i] = fmt.Sprintf("%d AS c%d", i, i)
	}
	f.betaOK(t, "query", "SELECT "+strings.Join(cols[:gateway.MaxSQLColumnsV1beta1], ", "))
	f.betaRefused(t, "sql_error", "query", "SELECT "+strings.Join(cols, ", "))
	f.betaOK(t, "query", "SELECT 1 AS \""+strings.Repeat("é", 64)+"\"")
	f.betaRefused(t, "sql_error", "query", "SELECT 1 AS \""+strings.Repeat("é", 64)+"x\"")
	f.betaOK(t, "query", "SELECT zeroblob(1000000) AS b")
	f.betaRefused(t, "sql_error", "query", "SELECT zeroblob(1000001) AS b")
	f.betaOK(t, "query", "SELECT printf('%.*c', 1000000, 'x') AS s")
	f.betaRefused(t, "sql_error", "query", "SELECT printf('%.*c', 1000001, 'x') AS s")
	// a row: two 999990-byte strings fit (1999997 bytes), 1000000 each do not
	f.betaOK(t, "query", "SELECT printf('%.*c', 999990, 'x') AS a, printf('%.*c', 999990, 'y') AS b")
	body := f.betaRefused(t, "sql_error", "query", "SELECT printf('%.*c', 1000000, 'x') AS a, printf('%.*c', 1000000, 'y') AS b")
	if !strings.Contains(body, fmt.Sprint(gateway.MaxSQLRowBytesV1beta1)) {
		t.Errorf("the row refusal names no limit: %.200s", body)
	}
	// the whole output: 8 rows of 1000000-byte strings fit, 9 do not
	f.betaOK(t, "query", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 8) SELECT printf('%.*c', 1000000, 'x') AS s FROM c")
	f.betaRefused(t, "sql_error", "query", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 9) SELECT printf('%.*c', 1000000, 'x') AS s FROM c")
	f.betaRefused(t, "sql_error", "execute", "INSERT INTO t (s) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 9) SELECT printf('%.*c', 1000000, 'x') FROM c RETURNING s")
	if got := f.count(t); got != `{"rows":[{"c":0}],"rowsWritten":0}` {
		t.Errorf("after an execute whose output was too big: %s", got)
	}
}

// TestSQLRouteIsTheDatabasesFamily: each family's projection speaks its
// own route, and a database of the other family is refused there.
func TestSQLRouteIsTheDatabasesFamily(t *testing.T) {
	f := newBetaFixture(t)
	if a := f.sqlCall(t, "query", betaDB, map[string]any{"sql": "SELECT 1"}); a.status != 403 || a.code() != "backend_unavailable" {
		t.Errorf("a v1beta1 database on /sql/v1/: %d %s", a.status, a.body)
	}
	if a := f.do(t, "POST", "/sql/v1beta1/query", []byte(`{"sql":"SELECT 1"}`), nil, "uid-sql"); a.status != 403 || a.code() != "backend_unavailable" {
		t.Errorf("a v1alpha1 database on /sql/v1beta1/: %d %s", a.status, a.body)
	}
	if a := f.sqlCall(t, "query", "uid-sql", map[string]any{"sql": "SELECT 1 AS one"}); a.status != 200 {
		t.Errorf("a v1alpha1 database on /sql/v1/: %d %s", a.status, a.body)
	}
}
