package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// rawStmt is one statement prepared on a reader's driver connection, run
// under (*sql.Conn).Raw: a read of one row skips database/sql's Rows, its
// context watcher and its per-column conversion, and the driver's fresh
// copy of a BLOB is kept instead of copied again
// (PERFORMANCE.md, log entry "The exact read on SQLite runs on the driver
// connection"). Its argument and row slices are kept from run to run: a
// reader runs one statement at a time (PERFORMANCE.md, log entry "The
// host's CPU per exact read").
type rawStmt struct {
	stmt  driver.Stmt
	query driver.StmtQueryContext // stmt, as the driver's statements are
	named []driver.NamedValue     // the arguments of the run in progress
	row   valuesRow               // the row of the last run
}

// prepareRaw prepares query on conn's driver connection.
func prepareRaw(ctx context.Context, conn *sql.Conn, query string) (*rawStmt, error) {
	var st driver.Stmt
	err := conn.Raw(func(dc any) error {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection %T does not prepare with a context", dc)
		}
		var err error
		st, err = p.PrepareContext(ctx, query)
		return err
	})
	if err != nil {
		return nil, err
	}
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.Join(fmt.Errorf("the SQLite driver's statement %T does not query with a context", st), conn.Raw(func(any) error { return st.Close() }))
	}
	return &rawStmt{stmt: st, query: q}, nil
}

// queryRow runs the statement with args on conn and reads its first row
// into a valuesRow, which is the statement's own until its next run; no
// row is sql.ErrNoRows, as (*sql.Row).Scan reports it.
func (s *rawStmt) queryRow(conn *sql.Conn, args ...any) (row valuesRow, err error) {
	for i, a := range args {
		s.named = append(s.named, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	defer func() { clear(s.named); s.named = s.named[:0] }() // hold no argument between runs
	err = conn.Raw(func(any) (rerr error) {
		rows, err := s.query.QueryContext(context.Background(), s.named)
		if err != nil {
			return err
		}
		defer func() { rerr = errors.Join(rerr, rows.Close()) }()
		n := len(rows.Columns())
		if cap(s.row) < n {
			s.row = make(valuesRow, n)
		}
		row = s.row[:n]
		if err := rows.Next(row); errors.Is(err, io.EOF) {
			return sql.ErrNoRows
		} else if err != nil {
			return err
		}
		return nil
	})
	return row, err
}

// close closes the statement on conn.
func (s *rawStmt) close(conn *sql.Conn) error {
	return conn.Raw(func(any) error { return s.stmt.Close() })
}

// valuesRow is one row as the driver gives it, read through
// sqlrow.Scanner into *string, *int64 and *[]byte destinations: TEXT is a
// string, INTEGER an int64, BLOB a []byte the driver copied for this row
// (NULL reads as the zero value, which no column read this way holds).
type valuesRow []driver.Value

// Scan assigns the row's values to dest in order.
func (r valuesRow) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("scan of %d columns into %d destinations", len(r), len(dest))
	}
	for i, d := range dest {
		v, ok := r[i], false
		switch d := d.(type) {
		case *string:
			switch v := v.(type) {
			case nil:
				*d, ok = "", true
			case string:
				*d, ok = v, true
			case []byte:
				*d, ok = string(v), true
			}
		case *int64:
			switch v := v.(type) {
			case nil:
				*d, ok = 0, true
			case int64:
				*d, ok = v, true
			}
		case *[]byte:
			switch v := v.(type) {
			case nil:
				*d, ok = nil, true
			case []byte:
				*d, ok = v, true
			case string:
				*d, ok = []byte(v), true
			}
		default:
			return fmt.Errorf("scan of column %d into %T: unsupported destination", i, d)
		}
		if !ok {
			return fmt.Errorf("scan of column %d: a %T does not read into %T", i, v, d)
		}
	}
	return nil
}
