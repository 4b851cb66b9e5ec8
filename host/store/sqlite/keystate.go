package sqlite

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The parts of qKeyState, named by each row's first column.
const (
	partReplay int64 = iota
	partResource
	partPending
	partPin
)

// keyStateWidth is how many value columns follow a qKeyState row's part:
// those of its widest part, sqlrow.ResourceValueCols.
const keyStateWidth = 14

// KeyState reads Idempotency(replay) (when replay is not nil),
// Resource(k), PendingOperationFor(k) and PinsToName(k) in one statement
// (qKeyState) instead of four: on the one writer (repo decision 0001) nothing
// changes them in between, and a create pays one statement for them
// (PERFORMANCE.md, log entry "SQLite: a create's key state in one
// statement on the writer"). A nil replay reads
// the record at NULL, which matches none.
func (t *tx) KeyState(k store.Key, replay *store.IdempotencyKey) (_ *store.KeyState, err error) {
	var rt, rp, rs, rk, rl any
	if replay != nil {
		rt, rp, rs, rk, rl = replay.Tenant, replay.Principal, replay.Space, replay.Key, replay.Lane
	}
	rows, err := t.query(qKeyState, rt, rp, rs, rk, k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name, rl)
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", sqlrow.KeyString(k), err)
	}
	defer store.JoinCleanup(&err, rows.Close)
	st := &store.KeyState{}
	var ords []int64
	var part int64
	var row keyStateRow
	dest := make([]any, 1, 1+keyStateWidth)
	dest[0] = &part
	for i := range row {
		dest = append(dest, &row[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read state of %s: %w", sqlrow.KeyString(k), err)
		}
		switch part {
		case partReplay:
			st.Replay, err = sqlrow.ScanIdempotencyAt(&row, *replay)
		case partResource:
			st.Resource, err = sqlrow.ScanResourceAt(&row, k)
		case partPending:
			st.Pending, err = sqlrow.ScanPendingOperation(&row, k)
		case partPin:
			var p store.Pin
			if p, err = sqlrow.ScanPin(&row); err == nil {
				var ord int64
				err = row[12].assign(&ord)
				st.PinsTo, ords = append(st.PinsTo, p), append(ords, ord)
			}
		default:
			err = fmt.Errorf("unknown part %d", part)
		}
		if err != nil {
			return nil, fmt.Errorf("read state of %s: part %d: %w", sqlrow.KeyString(k), part, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read state of %s: %w", sqlrow.KeyString(k), err)
	}
	sortPins(st.PinsTo, ords)
	return st, nil
}

// sortPins orders pins as PinsToName does, by source UID then the
// source's pin order (ords, one per pin), which the statement does not
// promise.
func sortPins(pins []store.Pin, ords []int64) {
	if len(pins) < 2 {
		return
	}
	idx := make([]int, len(pins))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(pins[a].SourceUID, pins[b].SourceUID), cmp.Compare(ords[a], ords[b]))
	})
	sorted := make([]store.Pin, len(pins))
	for i, j := range idx {
		sorted[i] = pins[j]
	}
	copy(pins, sorted)
}

// KeyStateExpectFree reads as KeyState: on the one writer the read is a
// statement of its own transaction's, with nothing to save by taking the
// state for granted (store.Tx).
func (t *tx) KeyStateExpectFree(k store.Key, replay *store.IdempotencyKey) (*store.KeyState, error) {
	return t.KeyState(k, replay)
}

// keyStateRow holds the value columns of one qKeyState row as the driver
// gave them; its Scan hands them to a sqlrow scanner.
type keyStateRow [keyStateWidth]cell

// Scan assigns the row's first len(dest) columns to dest (sqlrow.Scanner).
func (r *keyStateRow) Scan(dest ...any) error {
	if len(dest) > len(r) {
		return fmt.Errorf("%d destinations for %d columns", len(dest), len(r))
	}
	for i, d := range dest {
		if err := r[i].assign(d); err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return nil
}

// cell is one column value as the driver gave it (database/sql's
// Scanner): nil, int64, float64, string or []byte; bytes are copied, the
// driver owns them only until the next row.
type cell struct{ v any }

func (c *cell) Scan(src any) error {
	if b, ok := src.([]byte); ok {
		src = bytes.Clone(b)
	}
	c.v = src
	return nil
}

// assign stores the cell in dest, of a type the sqlrow scanners read
// into; a NULL or a value of another type is an error.
func (c *cell) assign(dest any) error {
	switch d := dest.(type) {
	case *string:
		switch v := c.v.(type) {
		case string:
			*d = v
			return nil
		case []byte:
			*d = string(v)
			return nil
		}
	case *store.Action:
		if v, ok := c.v.(string); ok {
			*d = store.Action(v)
			return nil
		}
	case *[]byte:
		switch v := c.v.(type) {
		case []byte:
			*d = v
			return nil
		case string:
			*d = []byte(v)
			return nil
		}
	case *int64:
		if v, ok := c.v.(int64); ok {
			*d = v
			return nil
		}
	case *int:
		if v, ok := c.v.(int64); ok {
			*d = int(v)
			return nil
		}
	}
	return fmt.Errorf("cannot store %T in %T", c.v, dest)
}
