package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
)

// groupBeta is the Edge group whose edge.sql this file serves.
const groupBeta = edge.GroupV1beta1

// edge.sql limits of the v1beta1 family, enforced exactly
// (forms/edge/family-v1beta1/interfaces/edge.sql; spec/runtime-v1.md §5.3,
// right column). Byte limits count UTF-8 bytes (SQL, column names, TEXT),
// decoded bytes (BLOB) or the bytes of the RFC 8785 canonical JSON of one
// row and of the whole output. Parameters, rows and statements per
// transaction are bounded as in v1alpha1 (MaxSQLParams, MaxSQLRows,
// MaxSQLStatements).
const (
	// MaxSQLSafeNumber is the largest magnitude of a number value,
	// 2^53-1: larger, or not finite, is numeric_out_of_range.
	MaxSQLSafeNumber             = 9007199254740991
	MaxSQLStatementBytesV1beta1  = 100000
	MaxSQLColumnsV1beta1         = 100
	MaxSQLColumnNameBytesV1beta1 = 128
	MaxSQLTextBytesV1beta1       = 1000000
	MaxSQLBlobBytesV1beta1       = 1000000
	MaxSQLRowBytesV1beta1        = 2000000
	MaxSQLResultBytesV1beta1     = 8388608
)

// numericOutOfRange is the v1beta1 refusal of a number that is not finite
// or lies outside ±MaxSQLSafeNumber, given or produced.
func numericOutOfRange(format string, a ...any) *Error {
	return errorf(http.StatusBadRequest, "numeric_out_of_range", format, a...)
}

// decodeParamV1beta1 checks one untagged parameter (params[i]): null, a
// JSON number, a string or {"encoding":"base64","data"}. An integral
// number binds as INTEGER, any other as REAL (which one SQLite stored is
// not observable in this contract).
func decodeParamV1beta1(raw json.RawMessage, i int) (bound, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return bound{}, sqlErrorf("params[%d] is empty", i)
	}
	switch c := raw[0]; {
	case c == 'n' && string(raw) == "null":
		return bound{kind: "null"}, nil
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return bound{}, sqlErrorf("params[%d] is not a JSON string: %v", i, err)
		}
		if len(s) > MaxSQLTextBytesV1beta1 {
			return bound{}, sqlErrorf("params[%d]: a string is at most %d UTF-8 bytes; this one has %d", i, MaxSQLTextBytesV1beta1, len(s))
		}
		return bound{kind: "text", bytes: []byte(s)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return numberParam(string(raw), i)
	case c == '{':
		return blobParam(raw, i)
	}
	return bound{}, sqlErrorf("params[%d] is not an edge.sql value of %s: one of null, a number, a string or {\"encoding\":\"base64\",\"data\"} (no booleans, arrays or big integers)", i, groupBeta)
}

// numberParam binds a JSON number literal exactly.
func numberParam(lit string, i int) (bound, *Error) {
	if !strings.ContainsAny(lit, ".eE") {
		n, err := strconv.ParseInt(lit, 10, 64)
		if errors.Is(err, strconv.ErrRange) || (err == nil && (n > MaxSQLSafeNumber || n < -MaxSQLSafeNumber)) {
			return bound{}, numericOutOfRange("params[%d] is %s, outside ±%d; pass a larger integer as a string", i, lit, MaxSQLSafeNumber)
		}
		if err == nil {
			return bound{kind: "integer", i: n}, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && math.Abs(f) > MaxSQLSafeNumber) {
		return bound{}, numericOutOfRange("params[%d] is %s, outside ±%d", i, lit, MaxSQLSafeNumber)
	}
	if err != nil {
		return bound{}, sqlErrorf("params[%d] is not a JSON number", i)
	}
	if f == math.Trunc(f) {
		return bound{kind: "integer", i: int64(f)}, nil
	}
	return bound{kind: "real", f: f}, nil
}

// blobParam decodes {"encoding":"base64","data"} with nothing else.
func blobParam(raw json.RawMessage, i int) (bound, *Error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return bound{}, sqlErrorf("params[%d] is not a JSON object: %v", i, err)
	}
	if _, tagged := m["type"]; tagged {
		return bound{}, sqlErrorf("params[%d] is a tagged value {type, …}, which is the %s edge.sql; %s takes null, a number, a string or {\"encoding\":\"base64\",\"data\"}", i, edge.GroupV1alpha1, groupBeta)
	}
	var enc, data string
	if len(m) != 2 || json.Unmarshal(m["encoding"], &enc) != nil || enc != "base64" || json.Unmarshal(m["data"], &data) != nil {
		return bound{}, sqlErrorf("params[%d]: a BLOB is exactly {\"encoding\":\"base64\",\"data\":\"<base64>\"}", i)
	}
	if len(data) > base64.StdEncoding.EncodedLen(MaxSQLBlobBytesV1beta1) {
		return bound{}, sqlErrorf("params[%d]: a BLOB is at most %d bytes; this one's base64 has %d characters", i, MaxSQLBlobBytesV1beta1, len(data))
	}
	b, err := base64.StdEncoding.Strict().DecodeString(data)
	if err != nil {
		return bound{}, sqlErrorf("params[%d]: a BLOB's data is padded RFC 4648 base64 without line breaks: %v", i, err)
	}
	if len(b) > MaxSQLBlobBytesV1beta1 {
		return bound{}, sqlErrorf("params[%d]: a BLOB is at most %d bytes; this one has %d", i, MaxSQLBlobBytesV1beta1, len(b))
	}
	return bound{kind: "blob", bytes: b}, nil
}

// columnV1beta1 reads column i of the current row as its untagged value
// (nil, json.Number, string, or the encoded-bytes object).
func columnV1beta1(e *engine, stmt uintptr, i int, name string) (any, *Error) {
	switch e.columnType(stmt, i) {
	case sqlite3.SQLITE_INTEGER:
		n := e.columnInt64(stmt, i)
		if n > MaxSQLSafeNumber || n < -MaxSQLSafeNumber {
			return nil, numericOutOfRange("column %q holds %d, outside ±%d; CAST it to TEXT to read it", name, n, MaxSQLSafeNumber)
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case sqlite3.SQLITE_FLOAT:
		f := e.columnDouble(stmt, i)
		if math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > MaxSQLSafeNumber {
			return nil, numericOutOfRange("column %q holds a number that is not finite or lies outside ±%d; CAST it to TEXT to read it", name, MaxSQLSafeNumber)
		}
		s, err := jcs.NumberToJSON(f)
		if err != nil {
			return nil, numericOutOfRange("column %q: %v", name, err)
		}
		return json.Number(s), nil
	case sqlite3.SQLITE_TEXT:
		b := e.columnBytes(stmt, i, true)
		if !utf8.Valid(b) {
			return nil, sqlErrorf("column %q holds TEXT that is not UTF-8; read it as a BLOB with CAST(… AS BLOB)", name)
		}
		if len(b) > MaxSQLTextBytesV1beta1 {
			return nil, sqlErrorf("column %q holds TEXT of %d bytes; a string is at most %d UTF-8 bytes", name, len(b), MaxSQLTextBytesV1beta1)
		}
		return string(b), nil
	case sqlite3.SQLITE_BLOB:
		b := e.columnBytes(stmt, i, false)
		if len(b) > MaxSQLBlobBytesV1beta1 {
			return nil, sqlErrorf("column %q holds a BLOB of %d bytes; a BLOB is at most %d", name, len(b), MaxSQLBlobBytesV1beta1)
		}
		return map[string]any{"encoding": "base64", "data": base64.StdEncoding.EncodeToString(b)}, nil
	default:
		return nil, nil
	}
}

// rowV1beta1 is one row's RFC 8785 canonical JSON, checked against
// MaxSQLRowBytesV1beta1.
func rowV1beta1(names []string, vals []any) (row, *Error) {
	m := make(map[string]any, len(names))
	for i, n := range names {
		m[n] = vals[i]
	}
	b, err := ijson.CanonicalValue(m)
	if err != nil {
		return row{}, sqlErrorf("a row could not be written as JSON: %v", err)
	}
	if len(b) > MaxSQLRowBytesV1beta1 {
		return row{}, sqlErrorf("a row's canonical JSON is %d bytes; a row is at most %d: select fewer or smaller columns", len(b), MaxSQLRowBytesV1beta1)
	}
	return row{canon: b}, nil
}

// resultBytes is the size of r's canonical JSON {"rows":[…],"rowsWritten":n}.
func resultBytes(r result) int {
	n := len(`{"rows":[],"rowsWritten":}`) + len(strconv.FormatInt(r.RowsWritten, 10))
	for i, row := range r.Rows {
		if i > 0 {
			n++
		}
		n += len(row.canon)
	}
	return n
}

// outputBytes is the size of a call's whole canonical output: one result,
// or {"results":[…]} for transaction.
func outputBytes(results []result, transaction bool) int {
	if !transaction {
		return resultBytes(results[0])
	}
	n := len(`{"results":[]}`)
	for i, r := range results {
		if i > 0 {
			n++
		}
		n += resultBytes(r)
	}
	return n
}
