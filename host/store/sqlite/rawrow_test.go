package sqlite

import (
	"bytes"
	"database/sql/driver"
	"strings"
	"testing"
)

// TestValuesRowScan: each driver value type reads into the destination
// the store scans it into, NULL reads as the zero value, and a value of
// another type, a destination of another type or a count mismatch is
// refused naming the column.
func TestValuesRowScan(t *testing.T) {
	var s, fromBytes, null string
	var n, nullN int64
	var b, fromText []byte
	row := valuesRow{"uid-1", []byte("text"), nil, int64(7), nil, []byte{1, 2}, "{}"}
	if err := row.Scan(&s, &fromBytes, &null, &n, &nullN, &b, &fromText); err != nil {
		t.Fatal(err)
	}
	if s != "uid-1" || fromBytes != "text" || null != "" || n != 7 || nullN != 0 || !bytes.Equal(b, []byte{1, 2}) || string(fromText) != "{}" {
		t.Fatalf("scanned %q %q %q %d %d %v %q", s, fromBytes, null, n, nullN, b, fromText)
	}
	for name, c := range map[string]struct {
		row  valuesRow
		dest []any
		want string
	}{
		"float into int64":   {valuesRow{1.5}, []any{&n}, "column 0: a float64 does not read into *int64"},
		"int64 into string":  {valuesRow{"a", int64(1)}, []any{&s, &s}, "column 1: a int64 does not read into *string"},
		"unsupported dest":   {valuesRow{int64(1)}, []any{new(float64)}, "column 0 into *float64"},
		"fewer destinations": {valuesRow{"a", "b"}, []any{&s}, "scan of 2 columns into 1 destinations"},
		"bool into []byte":   {valuesRow{driver.Value(true)}, []any{&b}, "a bool does not read into *[]uint8"},
	} {
		if err := c.row.Scan(c.dest...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}
