package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sqlite3 "modernc.org/sqlite/lib"
)

// MaxSQLCallDuration bounds one call's time in the engine (a host limit):
// a longer call is interrupted, rolled back and fails sql_error.
const MaxSQLCallDuration = 30 * time.Second

// statement is one statement of a call, as the projection sends it.
type statement struct {
	SQL    string            `json:"sql"`
	Params []json.RawMessage `json:"params,omitempty"`
}

// result is one statement's result (spec/runtime-v1.md §5.3, v1alpha1).
type result struct {
	Rows            []row  `json:"rows"`
	RowsWritten     int64  `json:"rowsWritten"`
	LastInsertRowID string `json:"lastInsertRowId,omitempty"`
}

// row is one result row: its columns in order, written as one object
// (v1alpha1), or its canonical JSON (v1beta1, rowV1beta1).
type row struct {
	names []string
	vals  []out
	canon []byte
}

func (r row) MarshalJSON() ([]byte, error) {
	if r.canon != nil {
		return r.canon, nil
	}
	b := []byte{'{'}
	for i, n := range r.names {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		v, err := r.vals[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// sqlCall is one call: its statements, the operation's mode (authExecute
// for execute and transaction, authQuery for query), whether it is a
// transaction, and whether the database is of the v1beta1 family
// (spec/runtime-v1.md §5.3, right column).
type sqlCall struct {
	mode        authMode
	transaction bool
	beta        bool
	stmts       []statement
}

// call runs c's statements as one transaction on e: every statement or
// none takes effect, and a query's transaction always rolls back. Under
// v1beta1 the whole output is checked against MaxSQLResultBytesV1beta1
// before the commit.
func call(ctx context.Context, e *engine, pol *policy, c sqlCall) ([]result, *Error) {
	mode, stmts := c.mode, c.stmts
	ctx, cancel := context.WithTimeout(ctx, MaxSQLCallDuration)
	defer cancel()
	var mu sync.Mutex
	running, interrupted := true, false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if running {
			interrupted = true
			e.interrupt()
		}
	})
	defer func() {
		stop()
		mu.Lock()
		running = false
		mu.Unlock()
	}()
	host := func(text string) error {
		pol.reset(authHost)
		return e.exec(text)
	}
	// rollback ends the call's transaction unless SQLite already rolled it
	// back (it does after SQLITE_FULL, IOERR, NOMEM, BUSY, INTERRUPT).
	rollback := func() error {
		if e.autocommit() {
			return nil
		}
		return host("ROLLBACK")
	}
	begin := "BEGIN IMMEDIATE"
	if mode == authQuery {
		begin = "BEGIN"
	}
	if err := host(begin); err != nil {
		return nil, engineError(err, false)
	}
	results := make([]result, 0, len(stmts))
	size := 0
	for i, st := range stmts {
		r, ferr := runStatement(e, pol, c, st, &size)
		if ferr == nil && c.beta && i == len(stmts)-1 && outputBytes(append(results, r), c.transaction) > MaxSQLResultBytesV1beta1 {
			ferr = sqlErrorf("the call's output is %d bytes of canonical JSON; at most %d: read less per call", outputBytes(append(results, r), c.transaction), MaxSQLResultBytesV1beta1)
		}
		if ferr != nil {
			if err := rollback(); err != nil {
				return nil, unavailable(fmt.Errorf("roll back after %s: %w", ferr.Message, err))
			}
			mu.Lock()
			timedOut := interrupted
			mu.Unlock()
			if timedOut {
				ferr = sqlErrorf("the call was stopped: it ran past the host's %s limit or its caller went away", MaxSQLCallDuration)
			}
			if len(stmts) > 1 {
				ferr.Message = fmt.Sprintf("statements[%d]: %s; nothing of the transaction was applied", i, ferr.Message)
			}
			return nil, ferr
		}
		results = append(results, r)
	}
	end := "COMMIT"
	if mode == authQuery {
		end = "ROLLBACK"
	}
	if err := host(end); err != nil {
		if rerr := rollback(); rerr != nil {
			return nil, unavailable(errors.Join(err, rerr))
		}
		return nil, engineError(err, false)
	}
	return results, nil
}

// runStatement prepares, checks, binds and steps one statement inside the
// call's transaction; *size adds up the call's result for
// MaxSQLResultBytes (v1alpha1) or MaxSQLResultBytesV1beta1.
func runStatement(e *engine, pol *policy, c sqlCall, st statement, size *int) (result, *Error) {
	mode := c.mode
	if strings.IndexByte(st.SQL, 0) >= 0 {
		return result{}, sqlErrorf("the SQL text holds a NUL character")
	}
	if c.beta {
		if n := len(st.SQL); n > MaxSQLStatementBytesV1beta1 || n == 0 {
			return result{}, sqlErrorf("a statement is 1 to %d UTF-8 bytes; this one has %d", MaxSQLStatementBytesV1beta1, n)
		}
	} else if n := utf8.RuneCountInString(st.SQL); n > MaxSQLStatementChars || n == 0 {
		return result{}, sqlErrorf("a statement is 1 to %d characters; this one has %d", MaxSQLStatementChars, n)
	}
	if len(st.Params) > MaxSQLParams {
		return result{}, sqlErrorf("a statement takes at most %d params; this one has %d", MaxSQLParams, len(st.Params))
	}
	decode := decodeParam
	if c.beta {
		decode = decodeParamV1beta1
		// query runs any statement and rolls it back: the authorizer
		// allows writes, the rollback undoes them.
		mode = authExecute
	}
	params := make([]bound, len(st.Params))
	for i, raw := range st.Params {
		var ferr *Error
		if params[i], ferr = decode(raw, i); ferr != nil {
			return result{}, ferr
		}
	}
	pol.reset(mode)
	stmt, tail, err := e.prepare(st.SQL)
	if err != nil {
		return result{}, denialOr(pol, err)
	}
	defer e.finalize(stmt)
	if stmt == 0 {
		return result{}, sqlErrorf("the SQL text holds no statement, only whitespace or comments")
	}
	dml, insert := pol.dml, pol.insert
	if rest := st.SQL[tail:]; strings.TrimSpace(rest) != "" {
		pol.reset(authHost) // compiling only, to ask the engine whether a statement follows
		second, _, err := e.prepare(rest)
		e.finalize(second)
		if err != nil || second != 0 {
			return result{}, sqlErrorf("exactly one statement per call: something other than whitespace and comments follows the first statement's end; send several statements with transaction()")
		}
	}
	pol.reset(mode)
	pol.dml, pol.insert = dml, insert
	if mode == authQuery && !e.readonly(stmt) {
		return result{}, sqlErrorf("query runs reading statements only; send writes with execute()")
	}
	if n := e.paramCount(stmt); n > len(params) {
		return result{}, sqlErrorf("the statement uses parameter ?%d but params has %d values", n, len(params))
	}
	for i := 0; i < e.paramCount(stmt); i++ {
		p := params[i]
		var rc int32
		switch p.kind {
		case "null":
			rc = e.bindNull(stmt, i+1)
		case "integer":
			rc = e.bindInt64(stmt, i+1, p.i)
		case "real":
			rc = e.bindDouble(stmt, i+1, p.f)
		default:
			rc = e.bindBytes(stmt, i+1, p.bytes, p.kind == "text")
		}
		if rc != sqlite3.SQLITE_OK {
			return result{}, engineError(e.err(rc), false)
		}
	}
	cols := e.columnCount(stmt)
	maxCols, maxName, unit := MaxSQLColumns, MaxSQLColumnNameChars, "characters"
	nameLen := utf8.RuneCountInString
	if c.beta {
		maxCols, maxName, unit = MaxSQLColumnsV1beta1, MaxSQLColumnNameBytesV1beta1, "UTF-8 bytes"
		nameLen = func(s string) int { return len(s) }
	}
	if cols > maxCols {
		return result{}, sqlErrorf("a row holds at most %d columns; this statement returns %d", maxCols, cols)
	}
	names := make([]string, cols)
	seen := make(map[string]bool, cols)
	for i := range names {
		names[i] = e.columnName(stmt, i)
		if n := nameLen(names[i]); n > maxName {
			return result{}, sqlErrorf("a column name is at most %d %s; %.40q… has %d: name it with AS", maxName, unit, names[i], n)
		}
		if seen[names[i]] {
			return result{}, sqlErrorf("two result columns are named %q; a row is an object, so name them apart with AS", names[i])
		}
		seen[names[i]] = true
	}
	res := result{Rows: []row{}}
	for {
		more, err := e.step(stmt)
		if err != nil {
			return result{}, denialOr(pol, err)
		}
		if !more {
			break
		}
		if len(res.Rows) == MaxSQLRows {
			return result{}, sqlErrorf("a statement returns at most %d rows; page it with LIMIT and OFFSET or a key range", MaxSQLRows)
		}
		if c.beta {
			r, ferr := readRowV1beta1(e, stmt, names)
			if ferr != nil {
				return result{}, ferr
			}
			if *size += len(r.canon) + 1; *size > MaxSQLResultBytesV1beta1 {
				return result{}, sqlErrorf("the call's output passes %d bytes of canonical JSON; read less per call", MaxSQLResultBytesV1beta1)
			}
			res.Rows = append(res.Rows, r)
			continue
		}
		r := row{names: names, vals: make([]out, cols)}
		for i := range cols {
			v, ferr := column(e, stmt, i, names[i])
			if ferr != nil {
				return result{}, ferr
			}
			r.vals[i] = v
			*size += v.size()
		}
		if *size > MaxSQLResultBytes {
			return result{}, sqlErrorf("the call's results pass the host's limit of %d bytes; read less per call", MaxSQLResultBytes)
		}
		res.Rows = append(res.Rows, r)
	}
	if e.autocommit() {
		return result{}, sqlErrorf("the statement ended the call's transaction")
	}
	if pol.dml && !(c.beta && c.mode == authQuery) {
		res.RowsWritten = e.changes()
		if pol.insert && res.RowsWritten > 0 && !c.beta {
			res.LastInsertRowID = strconv.FormatInt(e.lastInsertRowID(), 10)
		}
	}
	return res, nil
}

// readRowV1beta1 reads the current row as its canonical JSON.
func readRowV1beta1(e *engine, stmt uintptr, names []string) (row, *Error) {
	vals := make([]any, len(names))
	for i := range names {
		v, ferr := columnV1beta1(e, stmt, i, names[i])
		if ferr != nil {
			return row{}, ferr
		}
		vals[i] = v
	}
	return rowV1beta1(names, vals)
}

// column reads column i of the current row as its tagged value.
func column(e *engine, stmt uintptr, i int, name string) (out, *Error) {
	switch e.columnType(stmt, i) {
	case sqlite3.SQLITE_INTEGER:
		return out{kind: "integer", i: e.columnInt64(stmt, i)}, nil
	case sqlite3.SQLITE_FLOAT:
		f := e.columnDouble(stmt, i)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return out{}, sqlErrorf("column %q holds a real that is not finite, which JSON cannot carry; CAST it to TEXT", name)
		}
		return out{kind: "real", f: f}, nil
	case sqlite3.SQLITE_TEXT:
		b := e.columnBytes(stmt, i, true)
		if !utf8.Valid(b) {
			return out{}, sqlErrorf("column %q holds TEXT that is not UTF-8; read it as a BLOB with CAST(… AS BLOB)", name)
		}
		if n := utf8.RuneCount(b); n > MaxSQLTextChars {
			return out{}, sqlErrorf("column %q holds text of %d characters; a text value is at most %d", name, n, MaxSQLTextChars)
		}
		return out{kind: "text", s: string(b)}, nil
	case sqlite3.SQLITE_BLOB:
		s := base64.StdEncoding.EncodeToString(e.columnBytes(stmt, i, false))
		if len(s) > MaxSQLBlobBase64Chars {
			return out{}, sqlErrorf("column %q holds a blob whose base64 is %d characters; at most %d", name, len(s), MaxSQLBlobBase64Chars)
		}
		return out{kind: "blob", s: s}, nil
	default:
		return out{kind: "null"}, nil
	}
}

// denialOr is the refusal the policy recorded, else the engine's error.
func denialOr(pol *policy, err error) *Error {
	if pol.denied != "" {
		return sqlErrorf("%s", pol.denied)
	}
	return engineError(err, true)
}

// engineError maps an engine failure: busy for a lock another connection
// holds (retryable), backend_unavailable for an I/O or resource fault,
// sql_error with SQLite's message for the rest.
func engineError(err error, statement bool) *Error {
	se, ok := err.(*sqliteError)
	if !ok {
		return unavailable(err)
	}
	switch se.code {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return errorf(http.StatusServiceUnavailable, "busy", "the database is busy: %s; run the whole call again", se.msg)
	case sqlite3.SQLITE_FULL:
		e := unavailable(err)
		e.full = true
		return e
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return unavailable(err)
	}
	if !statement {
		return unavailable(err)
	}
	return sqlErrorf("%s", se.msg)
}
