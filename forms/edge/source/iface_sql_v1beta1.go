package source

// edge.sql@1.0.0 as lane v1beta1 re-specifies it (spec/lane-v1beta1.md §7.1,
// public decision 0034): untagged values, numeric_out_of_range, no
// lastInsertRowId, a query that always rolls back, one statement per call,
// no transaction control or schema change at runtime, byte limits.

// maxSafeInteger is Number.MAX_SAFE_INTEGER, 2^53-1: the largest magnitude
// a number value may have.
const maxSafeInteger = 9007199254740991

// untaggedSQLValue is one value: null, a number within ±maxSafeInteger, a
// string of at most 1000000 characters, or encoded bytes whose data is the
// base64 ceiling of 1000000 decoded bytes.
func untaggedSQLValue() M {
	return M{"oneOf": []any{
		M{"type": "null"},
		M{"type": "number", "minimum": -maxSafeInteger, "maximum": maxSafeInteger},
		textMax(1000000),
		encodedBytes(base64Len(1000000)),
	}}
}

func edgeSQLUntagged() Interface {
	statement := closed(M{"params": array(untaggedSQLValue(), "maxItems", 100), "sql": text(1, 100000)}, "sql")
	row := M{"type": "object", "additionalProperties": untaggedSQLValue(), "maxProperties": 100, "propertyNames": textMax(128)}
	rows := array(row, "maxItems", 10000)
	result := closed(M{"rows": rows, "rowsWritten": integerFrom(0)}, "rows", "rowsWritten")
	rolledBack := closed(M{"rows": rows, "rowsWritten": M{"type": "integer", "const": 0}}, "rows", "rowsWritten")
	sqlErrors := errs("sql_error", "numeric_out_of_range", "busy", "backend_unavailable")
	blob := M{"data": "AAECg/8=", "encoding": "base64"}
	return interfaceDoc("edge.sql", "Embedded SQLite (serializable, plain JSON values)",
		"SQL run against one embedded SQLite database with serializable transactions. A value, bound or "+
			"returned, is exactly one of: null; a finite number whose magnitude is at most 9007199254740991 "+
			"(2^53-1, the largest integer a binary64 number holds exactly); a UTF-8 string; or the family's "+
			"encoded-bytes object {\"encoding\":\"base64\",\"data\":\"…\"} for a BLOB, RFC 4648 section 4 base64, "+
			"padded and without line breaks. There are no booleans, no big integers and no tagged objects. Whether "+
			"SQLite stored a number as INTEGER or REAL is not carried and cannot be observed. A host never rounds, "+
			"stringifies, tags or otherwise coerces a number: a number that is not finite or lies outside that "+
			"range, whether given as a parameter or produced by a statement, fails with numeric_out_of_range. A "+
			"malformed value or invalid base64 fails with sql_error. Parameters bind BY POSITION, so ?1 is "+
			"params[0]. Every call carries exactly ONE statement: after it only whitespace and comments may follow, "+
			"and a second statement fails with sql_error. Transaction control (BEGIN, COMMIT, END, ROLLBACK, "+
			"SAVEPOINT, RELEASE) fails with sql_error in every operation, and so does any statement that would "+
			"change the schema, the set of attached databases or the migration ledger: the schema changes only "+
			"through a SQLiteMigrationApplication. A statement result is its rows, in order, and rowsWritten, the "+
			"number of rows it inserted, updated or deleted; there is no lastInsertRowId. Byte limits on SQL, "+
			"column names and TEXT count UTF-8 bytes, BLOB limits count decoded bytes, and maxRowBytes and "+
			"maxResultBytesPerCall count the UTF-8 bytes of the RFC 8785 canonical JSON of one row and of the whole "+
			"output. A result is built completely and checked against every numeric, value, column, row and result "+
			"limit before anything commits. Concurrent writers may fail with busy, the only retryable outcome; a "+
			"retry runs the whole call again.",
		[]any{
			operation("execute",
				"Runs one statement with its parameters bound by position and returns the rows it produced and "+
					"rowsWritten. The statement may write, so execute is NOT idempotent: running an INSERT twice "+
					"inserts twice. The output and the limits are checked before the statement's own transaction "+
					"commits, so numeric_out_of_range or an exceeded limit leaves the database unchanged. A caller "+
					"retrying after an unknown outcome must find out for itself whether the first call took effect.",
				statement, result, sqlErrors, notIdempotent),
			operation("query",
				"Runs one statement inside a transaction that is ALWAYS rolled back, after its result has been built "+
					"and checked. The host does not classify the statement as read-only beforehand; the rollback is "+
					"what guarantees no lasting effect, which is why query is idempotent, and why rowsWritten is "+
					"always 0 even for a statement that changed rows before the rollback. A failure while building "+
					"or checking the result rolls back too.",
				statement, rolledBack, sqlErrors, idempotent),
			operation("transaction",
				"Runs 1 to 100 statements in order under serializable isolation and returns one result per "+
					"statement, in statement order. Every result is built and checked before the commit; only then "+
					"do all effects commit together. An SQL error, numeric_out_of_range, busy or any exceeded value, "+
					"row, column or result limit rolls everything back and returns no partial results, so a SELECT "+
					"inside a successful transaction returns what that same snapshot saw.",
				closed(M{"statements": array(statement, "minItems", 1, "maxItems", 100)}, "statements"),
				closed(M{"results": array(result, "minItems", 1, "maxItems", 100)}, "results"),
				sqlErrors, notIdempotent),
		},
		M{"consistency": "serializable"},
		M{
			"maxBlobBytesPerValue": 1000000, "maxBoundParameters": 100, "maxColumnNameBytes": 128,
			"maxColumnsPerRow": 100, "maxResultBytesPerCall": 8388608, "maxRowBytes": 2000000,
			"maxRowsPerStatement": 10000, "maxStatementBytes": 100000, "maxStatementsPerTransaction": 100,
			"maxTextBytesPerValue": 1000000,
		},
		[]any{
			fixture("wire-values-round-trip",
				sqlStep("execute", "SELECT ?1 AS n, ?2 AS t, ?3 AS b, ?4 AS z", []any{1.5, "first note", blob, nil},
					"expected", M{"rows": []any{M{"b": blob, "n": 1.5, "t": "first note", "z": nil}}, "rowsWritten": 0})),
			fixture("safe-number-boundary-round-trips",
				sqlStep("query", "SELECT ?1 AS v", []any{maxSafeInteger},
					"expected", M{"rows": []any{M{"v": maxSafeInteger}}, "rowsWritten": 0})),
			fixture("out-of-range-input-is-refused",
				sqlStep("query", "SELECT ?1 AS v", []any{maxSafeInteger + 1}, "expectedError", "numeric_out_of_range")),
			fixture("out-of-range-output-is-refused",
				sqlStep("query", "SELECT 9007199254740992 AS v", nil, "expectedError", "numeric_out_of_range")),
			fixture("a-transaction-reports-one-result-per-statement",
				step("transaction", M{"statements": []any{
					M{"params": []any{7}, "sql": "SELECT ?1 AS n"},
					M{"params": []any{"done"}, "sql": "SELECT ?1 AS t"},
				}}, "expected", M{"results": []any{
					M{"rows": []any{M{"n": 7}}, "rowsWritten": 0},
					M{"rows": []any{M{"t": "done"}}, "rowsWritten": 0},
				}})),
			fixture("multiple-statements-are-refused",
				sqlStep("execute", "SELECT 1; SELECT 2", nil, "expectedError", "sql_error")),
			fixture("transaction-control-is-refused",
				sqlStep("query", "BEGIN", nil, "expectedError", "sql_error")),
			fixture("schema-change-is-admin-only",
				sqlStep("execute", "CREATE TABLE forbidden_runtime_schema (id INTEGER PRIMARY KEY)", nil,
					"expectedError", "sql_error")),
		})
}
