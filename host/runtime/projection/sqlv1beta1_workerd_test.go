package projection_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/gateway"
)

// TestSQLV1beta1ProjectionInWorkerd: the v1beta1 edge.sql through real
// workerd (spec/runtime-v1.md §5.3, right column;
// forms/edge/family-v1beta1/interfaces/edge.sql): untagged values both
// ways with a BLOB staying {encoding, data}, numeric_out_of_range in and
// out, no lastInsertRowId, query rolled back, one statement per call,
// transaction control and schema changes refused, a byte limit; the
// schema comes from a migration (gateway.ApplyMigrations).
func TestSQLV1beta1ProjectionInWorkerd(t *testing.T) {
	e := startEngine(t)
	if _, err := e.gw.ApplyMigrations(t.Context(), "uid-sql-beta", []gateway.MigrationFile{
		{Path: "0001_notes.sql", Digest: "sha256:01", SQL: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER, b BLOB);"},
	}); err != nil {
		t.Fatal(err)
	}
	run := func(op string, args ...any) settled {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"op": op, "args": args})
		var s settled
		e.json(t, "POST", "/sql-v1beta1", body, &s)
		return s
	}
	blob := map[string]any{"encoding": "base64", "data": "AAECg/8="}
	for _, step := range []struct {
		op   string
		args []any
		want string
	}{
		{"execute", []any{"SELECT ?1 AS n, ?2 AS t, ?3 AS b, ?4 AS z", []any{1.5, "first note", blob, nil}},
			`{"rows":[{"b":{"data":"AAECg/8=","encoding":"base64"},"n":1.5,"t":"first note","z":null}],"rowsWritten":0}`},
		{"query", []any{"SELECT ?1 AS v", []any{json.Number("9007199254740991")}}, `{"rows":[{"v":9007199254740991}],"rowsWritten":0}`},
		{"execute", []any{"INSERT INTO notes (body, n, b) VALUES (?1, ?2, ?3)", []any{"é😀", 42, blob}}, `{"rows":[],"rowsWritten":1}`},
		{"query", []any{"INSERT INTO notes (body) VALUES ('rolled back') RETURNING body"}, `{"rows":[{"body":"rolled back"}],"rowsWritten":0}`},
		{"query", []any{"SELECT body, n, b FROM notes"}, `{"rows":[{"b":{"data":"AAECg/8=","encoding":"base64"},"body":"é😀","n":42}],"rowsWritten":0}`},
		{"transaction", []any{[]any{map[string]any{"sql": "UPDATE notes SET n = ?1", "params": []any{7}}, map[string]any{"sql": "SELECT n FROM notes"}}},
			`[{"rows":[],"rowsWritten":1},{"rows":[{"n":7}],"rowsWritten":0}]`},
	} {
		s := run(step.op, step.args...)
		if !s.OK || string(s.Value) != step.want {
			t.Errorf("%s %v: %+v %s\nwant %s", step.op, step.args[0], s, s.Value, step.want)
		}
	}
	for name, tc := range map[string]struct {
		op   string
		args []any
		want string
	}{
		"an unsafe parameter":          {"query", []any{"SELECT ?1 AS v", []any{json.Number("9007199254740992")}}, "numeric_out_of_range"},
		"an unsafe result":             {"query", []any{"SELECT 9007199254740992 AS v"}, "numeric_out_of_range"},
		"an infinite result":           {"query", []any{"SELECT 1e999 AS v"}, "numeric_out_of_range"},
		"a second statement":           {"execute", []any{"SELECT 1; SELECT 2"}, "sql_error"},
		"BEGIN":                        {"query", []any{"BEGIN"}, "sql_error"},
		"SAVEPOINT":                    {"execute", []any{"SAVEPOINT s"}, "sql_error"},
		"CREATE TABLE":                 {"execute", []any{"CREATE TABLE forbidden_runtime_schema (id INTEGER PRIMARY KEY)"}, "sql_error"},
		"DROP TABLE":                   {"execute", []any{"DROP TABLE notes"}, "sql_error"},
		"the ledger":                   {"query", []any{"SELECT * FROM " + gateway.LedgerTable}, "sql_error"},
		"a 1000001-byte string":        {"query", []any{"SELECT printf('%.*c', 1000001, 'x') AS s"}, "sql_error"},
		"a 100001-byte SQL text":       {"query", []any{"SELECT 1 AS v" + strings.Repeat(" ", 100001-13)}, "sql_error"},
		"params that are no array":     {"execute", []any{"SELECT ?1", "x"}, "TypeError"},
		"a 1000001-byte BLOB":          {"query", []any{"SELECT zeroblob(1000001) AS b"}, "sql_error"},
		"a 129-byte column name":       {"query", []any{"SELECT 1 AS " + strings.Repeat("c", 129)}, "sql_error"},
		"101 columns":                  {"query", []any{"SELECT " + columns(101)}, "sql_error"},
		"a row over 2000000 bytes":     {"query", []any{"SELECT printf('%.*c', 1000000, 'x') AS a, printf('%.*c', 1000000, 'y') AS b"}, "sql_error"},
		"an output over 8388608 bytes": {"query", []any{"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 9) SELECT printf('%.*c', 1000000, 'x') AS s FROM c"}, "sql_error"},
		"a failing transaction":        {"transaction", []any{[]any{map[string]any{"sql": "INSERT INTO notes (body) VALUES ('lost')"}, map[string]any{"sql": "SELECT 9007199254740992 AS v"}}}, "numeric_out_of_range"},
	} {
		s := run(tc.op, tc.args...)
		if s.OK || s.Name != tc.want || !s.IsError {
			t.Errorf("%s: %+v; want a rejection named %s", name, s, tc.want)
		}
	}
	if s := run("query", "SELECT count(*) AS n FROM notes"); string(s.Value) != `{"rows":[{"n":1}],"rowsWritten":0}` {
		t.Errorf("after the refusals and a rolled-back query: %s; want the one row", s.Value)
	}

	var js map[string]settled
	e.json(t, "GET", "/sql-v1beta1/js", nil, &js)
	for name, want := range map[string]string{
		"nan": "numeric_out_of_range", "infinity": "numeric_out_of_range", "unsafe": "numeric_out_of_range",
		"bigint": "sql_error", "boolean": "sql_error", "undef": "sql_error", "bytes": "sql_error", "tagged": "sql_error", "loneSurrogate": "sql_error",
	} {
		if s := js[name]; s.OK || s.Name != want || !s.IsError {
			t.Errorf("a %s parameter: %+v; want a rejection named %s", name, s, want)
		}
	}
	if s := js["safe"]; !s.OK {
		t.Errorf("-(2^53-1): %+v", s)
	}
	if s := js["blob"]; !s.OK || string(s.Value) != `{"data":"AAECg/8=","encoding":"base64"}` {
		t.Errorf("a BLOB in JS: %+v %s; want the {encoding, data} object", s, s.Value)
	}
	if s := js["big"]; !s.OK || string(s.Value) != `"number"` {
		t.Errorf("2^53-1 in JS: %+v %s; want a number", s, s.Value)
	}
}

// columns is n distinct result columns, "0 AS c0, 1 AS c1, …".
func columns(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf("%d AS c%d", i, i)
	}
	return strings.Join(cols, ", ")
}
