package source

// edge.sql@1.0.0 of lane v1alpha3 (spec/host-api-v1alpha3.md §7.1); lane
// v1beta1 re-specifies it in iface_sql_v1beta1.go.

// sqlValue is one tagged SQLite value: one of the five storage classes.
func sqlValue() M {
	decimal := with(textMax(20), "pattern", "^(?:0|-?[1-9][0-9]{0,18})$")
	return M{"type": "object", "oneOf": []any{
		closed(M{"type": choice("null")}, "type"),
		closed(M{"type": choice("integer"), "value": decimal}, "value", "type"),
		closed(M{"type": choice("real"), "value": M{"type": "number"}}, "value", "type"),
		closed(M{"type": choice("text"), "value": textMax(1000000)}, "value", "type"),
		closed(M{"base64": textMax(1333336), "type": choice("blob")}, "base64", "type"),
	}}
}

func textValue(s string) M    { return M{"type": "text", "value": s} }
func integerValue(s string) M { return M{"type": "integer", "value": s} }
func blobValue(b64 string) M  { return M{"type": "blob", "base64": b64} }

func sqlStep(operation, sql string, params []any, kv ...any) M {
	in := M{"sql": sql}
	if params != nil {
		in["params"] = params
	}
	return step(operation, in, kv...)
}

func (e Edition) edgeSQL() Interface {
	if e.beta {
		return edgeSQLUntagged()
	}
	decimal := with(textMax(20), "pattern", "^(?:0|-?[1-9][0-9]{0,18})$")
	statement := closed(M{"params": array(sqlValue(), "maxItems", 100), "sql": text(1, 100000)}, "sql")
	row := M{"type": "object", "additionalProperties": sqlValue(), "maxProperties": 256, "propertyNames": textMax(128)}
	result := closed(M{
		"lastInsertRowId": decimal,
		"rows":            array(row, "maxItems", 10000),
		"rowsWritten":     integerFrom(0),
	}, "rows", "rowsWritten")
	sqlErrors := errs("sql_error", "busy", "backend_unavailable")
	return interfaceDoc("edge.sql", "Embedded SQLite (serializable, tagged values)",
		"SQL statements run against one embedded SQLite database with serializable transactions. Values are "+
			"TAGGED and never bare JSON scalars: every bound parameter and every returned column value is exactly "+
			"one of {\"type\":\"null\"}, {\"type\":\"integer\",\"value\":\"<decimal>\"}, "+
			"{\"type\":\"real\",\"value\":<number>}, {\"type\":\"text\",\"value\":\"<string>\"} and "+
			"{\"type\":\"blob\",\"base64\":\"<base64>\"}: SQLite's five storage classes and nothing more. An "+
			"INTEGER is carried as canonical decimal TEXT, because an IEEE-754 double has a 53-bit mantissa and "+
			"9223372036854775807 would arrive as 9223372036854775808 if it were sent as a JSON number. A host MUST "+
			"refuse with sql_error an integer outside the 64-bit two's-complement range "+
			"-9223372036854775808..9223372036854775807, and one written with a leading zero, a leading plus sign or "+
			"surrounding whitespace. A BLOB is carried as RFC 4648 section 4 base64 with padding, so any bytes "+
			"survive; TEXT is UTF-8. There is no boolean member because SQLite has no boolean storage class: 0 and "+
			"1 are INTEGERs. lastInsertRowId uses the same canonical decimal text for the same reason. Each "+
			"statement reports the same result whether it ran alone or inside a transaction: rows, the rows it "+
			"returned in order (empty when it returned none); rowsWritten, how many rows it inserted, updated or "+
			"deleted; and lastInsertRowId when it inserted at least one row. Parameters bind BY POSITION, so ?1 is "+
			"params[0], and a statement that references an index the array does not have fails with sql_error. A "+
			"transaction applies its ordered statements atomically under serializable isolation: it sees one "+
			"consistent snapshot, and either every statement takes effect or none does. A failure anywhere rolls "+
			"the whole transaction back, leaves the database exactly as it was, and reports sql_error with no "+
			"partial results, since results for statements whose effects were discarded would describe a state "+
			"that never existed. Concurrent writers may fail with busy, the only retryable outcome; a caller that "+
			"retries runs the whole call again. query is declared idempotent, which only holds if it cannot write, "+
			"so a host MUST refuse with sql_error any writing statement submitted through query.",
		[]any{
			operation("execute",
				"Runs one statement with parameters bound by position and returns its result. A statement that "+
					"returns rows returns them here as well; a statement that writes reports rowsWritten and, when it "+
					"inserted at least one row, lastInsertRowId as canonical decimal text. execute is intentionally "+
					"NOT idempotent: running an INSERT again inserts again, so a caller retrying after a timeout must "+
					"work out for itself whether the first attempt took effect.",
				statement, result, sqlErrors, notIdempotent),
			operation("query",
				"Runs one READ statement with parameters bound by position and returns its rows. A host MUST refuse "+
					"a writing statement with sql_error: this operation is declared idempotent, and a write hidden "+
					"behind that declaration would let a safe retry repeat the write. rowsWritten is therefore "+
					"always 0 here and lastInsertRowId never appears.",
				statement, result, sqlErrors, idempotent),
			operation("transaction",
				"Applies an ordered list of statements atomically under serializable isolation and returns one "+
					"result per statement, in statement order. results has exactly as many entries as statements, "+
					"and each entry is the complete statement result, including the rows a SELECT inside the "+
					"transaction returned, so a read-modify-write sees what it read without leaving the transaction.",
				closed(M{"statements": array(statement, "minItems", 1, "maxItems", 100)}, "statements"),
				closed(M{"results": array(result, "maxItems", 100)}, "results"),
				sqlErrors, notIdempotent),
		},
		M{"consistency": "serializable"},
		M{
			"maxBoundParameters": 100, "maxColumnsPerRow": 256, "maxRowsPerStatement": 10000,
			"maxStatementBytes": 100000, "maxStatementsPerTransaction": 100,
		},
		[]any{
			fixture("create-insert-select",
				sqlStep("execute", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)", nil,
					"expected", M{"rows": []any{}, "rowsWritten": 0}),
				sqlStep("execute", "INSERT INTO notes (body) VALUES (?1)", []any{textValue("first note")},
					"expected", M{"lastInsertRowId": "1", "rowsWritten": 1}),
				sqlStep("query", "SELECT body FROM notes ORDER BY id", nil,
					"expected", M{"rows": []any{M{"body": textValue("first note")}}, "rowsWritten": 0})),
			fixture("a-64-bit-integer-round-trips-losslessly",
				sqlStep("execute", "CREATE TABLE counters (v INTEGER NOT NULL)", nil),
				sqlStep("execute", "INSERT INTO counters (v) VALUES (?1)", []any{integerValue("9223372036854775807")},
					"expected", M{"rowsWritten": 1}),
				sqlStep("query", "SELECT v FROM counters", nil,
					"expected", M{"rows": []any{M{"v": integerValue("9223372036854775807")}}})),
			fixture("a-blob-round-trips-losslessly",
				sqlStep("execute", "CREATE TABLE payloads (v BLOB NOT NULL)", nil),
				sqlStep("execute", "INSERT INTO payloads (v) VALUES (?1)", []any{blobValue("AAECg/8=")},
					"expected", M{"rowsWritten": 1}),
				sqlStep("query", "SELECT v FROM payloads", nil,
					"expected", M{"rows": []any{M{"v": blobValue("AAECg/8=")}}})),
			fixture("null-and-real-keep-their-storage-classes",
				sqlStep("execute", "CREATE TABLE readings (a REAL, b TEXT)", nil),
				sqlStep("execute", "INSERT INTO readings (a, b) VALUES (?1, ?2)",
					[]any{M{"type": "real", "value": 1.5}, M{"type": "null"}},
					"expected", M{"rowsWritten": 1}),
				sqlStep("query", "SELECT a, b FROM readings", nil,
					"expected", M{"rows": []any{M{"a": M{"type": "real", "value": 1.5}, "b": M{"type": "null"}}}})),
			fixture("a-transaction-reports-one-result-per-statement",
				step("transaction", M{"statements": []any{
					M{"sql": "CREATE TABLE events (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"},
					M{"params": []any{integerValue("7")}, "sql": "INSERT INTO events (n) VALUES (?1)"},
					M{"sql": "SELECT n FROM events ORDER BY id"},
				}}, "expected", M{"results": []any{
					M{"rows": []any{}, "rowsWritten": 0},
					M{"lastInsertRowId": "1", "rows": []any{}, "rowsWritten": 1},
					M{"rows": []any{M{"n": integerValue("7")}}, "rowsWritten": 0},
				}})),
			fixture("a-failed-transaction-applies-nothing",
				step("transaction", M{"statements": []any{
					M{"sql": "CREATE TABLE rolled_back (id INTEGER PRIMARY KEY)"},
					M{"sql": "INSERT INTO no_such_table (id) VALUES (1)"},
				}}, "expectedError", "sql_error"),
				sqlStep("query", "SELECT id FROM rolled_back", nil, "expectedError", "sql_error")),
		})
}
