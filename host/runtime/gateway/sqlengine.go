package gateway

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// engine is SQLite's C API on one connection of the modernc.org/sqlite
// driver, reached inside database/sql's Conn.Raw. The driver keeps the
// handle and its libc thread state in unexported fields; the gateway
// needs calls the driver does not wrap — the unparsed tail of
// sqlite3_prepare_v2 (so the engine, not our own parser, says whether a
// second statement follows), sqlite3_stmt_readonly, and column values by
// storage class without the driver's DATE/TIMESTAMP conversion — so it
// reads those two fields by name. engineOf fails loudly, never guesses,
// if a driver version lays them out differently (go.mod pins the version;
// every TestSQL… test runs through it).
type engine struct {
	tls *libc.TLS
	db  uintptr
}

func engineOf(driverConn any) (*engine, error) {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("sqlite driver connection is a %T, not a pointer to a struct", driverConn)
	}
	s := v.Elem()
	db, tls := s.FieldByName("db"), s.FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return nil, errors.New("this modernc.org/sqlite version keeps its connection handle differently; the gateway's SQL engine needs updating")
	}
	e := &engine{tls: (*libc.TLS)(tls.UnsafePointer()), db: uintptr(db.Uint())}
	if e.tls == nil || e.db == 0 {
		return nil, errors.New("sqlite driver connection is closed")
	}
	return e, nil
}

// sqliteError is an engine failure: its primary result code and message.
type sqliteError struct {
	code int32
	msg  string
}

func (e *sqliteError) Error() string { return e.msg }

func (e *engine) err(rc int32) error {
	return &sqliteError{code: rc & 0xff, msg: libc.GoString(sqlite3.Xsqlite3_errmsg(e.tls, e.db))}
}

// prepare compiles the first statement of text and returns it (0 when
// text holds only whitespace and comments) and the byte offset where the
// unparsed rest begins.
func (e *engine) prepare(text string) (stmt uintptr, tail int, err error) {
	p, err := libc.CString(text)
	if err != nil {
		return 0, 0, err
	}
	defer libc.Xfree(e.tls, p)
	out := libc.Xmalloc(e.tls, 2*types.Size_t(unsafe.Sizeof(uintptr(0))))
	if out == 0 {
		return 0, 0, errors.New("out of memory")
	}
	defer libc.Xfree(e.tls, out)
	ptr := unsafe.Sizeof(uintptr(0))
	if rc := sqlite3.Xsqlite3_prepare_v2(e.tls, e.db, p, int32(len(text)+1), out, out+ptr); rc != sqlite3.SQLITE_OK {
		return 0, 0, e.err(rc)
	}
	stmt = *(*uintptr)(cmem(out))
	tail = int(*(*uintptr)(cmem(out + ptr)) - p)
	return stmt, min(max(tail, 0), len(text)), nil
}

func (e *engine) finalize(stmt uintptr) {
	if stmt != 0 {
		sqlite3.Xsqlite3_finalize(e.tls, stmt)
	}
}

// exec runs one host statement (BEGIN, COMMIT, ROLLBACK) to completion.
func (e *engine) exec(text string) error {
	stmt, _, err := e.prepare(text)
	if err != nil {
		return err
	}
	defer e.finalize(stmt)
	if rc := sqlite3.Xsqlite3_step(e.tls, stmt); rc != sqlite3.SQLITE_DONE && rc != sqlite3.SQLITE_ROW {
		return e.err(rc)
	}
	return nil
}

func (e *engine) autocommit() bool { return sqlite3.Xsqlite3_get_autocommit(e.tls, e.db) != 0 }

func (e *engine) readonly(stmt uintptr) bool { return sqlite3.Xsqlite3_stmt_readonly(e.tls, stmt) != 0 }

func (e *engine) paramCount(stmt uintptr) int {
	return int(sqlite3.Xsqlite3_bind_parameter_count(e.tls, stmt))
}

func (e *engine) bindNull(stmt uintptr, i int) int32 {
	return sqlite3.Xsqlite3_bind_null(e.tls, stmt, int32(i))
}

func (e *engine) bindInt64(stmt uintptr, i int, v int64) int32 {
	return sqlite3.Xsqlite3_bind_int64(e.tls, stmt, int32(i), v)
}

func (e *engine) bindDouble(stmt uintptr, i int, v float64) int32 {
	return sqlite3.Xsqlite3_bind_double(e.tls, stmt, int32(i), v)
}

// bindBytes binds b as TEXT or BLOB; SQLite copies it (SQLITE_TRANSIENT).
func (e *engine) bindBytes(stmt uintptr, i int, b []byte, text bool) int32 {
	if len(b) == 0 && !text {
		return sqlite3.Xsqlite3_bind_zeroblob(e.tls, stmt, int32(i), 0)
	}
	p := libc.Xmalloc(e.tls, types.Size_t(max(len(b), 1)))
	if p == 0 {
		return sqlite3.SQLITE_NOMEM
	}
	defer libc.Xfree(e.tls, p)
	copy(unsafe.Slice((*byte)(cmem(p)), len(b)), b)
	if text {
		return sqlite3.Xsqlite3_bind_text(e.tls, stmt, int32(i), p, int32(len(b)), sqlite3.SQLITE_TRANSIENT)
	}
	return sqlite3.Xsqlite3_bind_blob(e.tls, stmt, int32(i), p, int32(len(b)), sqlite3.SQLITE_TRANSIENT)
}

// step advances stmt: true with a row, false when done.
func (e *engine) step(stmt uintptr) (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(e.tls, stmt); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, e.err(rc)
	}
}

func (e *engine) columnCount(stmt uintptr) int {
	return int(sqlite3.Xsqlite3_column_count(e.tls, stmt))
}

func (e *engine) columnName(stmt uintptr, i int) string {
	return libc.GoString(sqlite3.Xsqlite3_column_name(e.tls, stmt, int32(i)))
}

func (e *engine) columnType(stmt uintptr, i int) int32 {
	return sqlite3.Xsqlite3_column_type(e.tls, stmt, int32(i))
}

func (e *engine) columnInt64(stmt uintptr, i int) int64 {
	return sqlite3.Xsqlite3_column_int64(e.tls, stmt, int32(i))
}

func (e *engine) columnDouble(stmt uintptr, i int) float64 {
	return sqlite3.Xsqlite3_column_double(e.tls, stmt, int32(i))
}

// columnBytes copies a TEXT (UTF-8) or BLOB column's bytes.
func (e *engine) columnBytes(stmt uintptr, i int, text bool) []byte {
	var p uintptr
	if text {
		p = sqlite3.Xsqlite3_column_text(e.tls, stmt, int32(i))
	} else {
		p = sqlite3.Xsqlite3_column_blob(e.tls, stmt, int32(i))
	}
	n := int(sqlite3.Xsqlite3_column_bytes(e.tls, stmt, int32(i)))
	if p == 0 || n == 0 {
		return []byte{}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cmem(p)), n)...)
}

func (e *engine) changes() int64 { return sqlite3.Xsqlite3_changes64(e.tls, e.db) }

func (e *engine) lastInsertRowID() int64 { return sqlite3.Xsqlite3_last_insert_rowid(e.tls, e.db) }

// noAttach sets the connection's limit of attached databases to 0, so no
// ATTACH can succeed even past the authorizer.
func (e *engine) noAttach() {
	sqlite3.Xsqlite3_limit(e.tls, e.db, sqlite3.SQLITE_LIMIT_ATTACHED, 0)
}

// interrupter stops the statement running on e's connection from another
// goroutine (sqlite3_interrupt is safe from any thread).
func (e *engine) interrupt() {
	tls := libc.NewTLS()
	defer tls.Close()
	sqlite3.Xsqlite3_interrupt(tls, e.db)
}

// cmem is the address p of memory SQLite or libc allocated (never Go's).
func cmem(p uintptr) unsafe.Pointer { return unsafe.Add(nil, p) }

// checkpointTruncate copies every frame of the write-ahead log into the
// database file and truncates the log to zero bytes (a database the
// owner on a replicated host runs in WAL mode, repo decision 0063). It
// runs through the C API, not as a statement, so no authorizer sees it.
func (e *engine) checkpointTruncate() error {
	if rc := sqlite3.Xsqlite3_wal_checkpoint_v2(e.tls, e.db, 0, sqlite3.SQLITE_CHECKPOINT_TRUNCATE, 0, 0); rc != sqlite3.SQLITE_OK {
		return e.err(rc)
	}
	return nil
}
