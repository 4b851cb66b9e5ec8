package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// edge.sql limits of the v1alpha1 family, enforced exactly
// (spec/runtime-v1.md §5.3), and the host's own bounds on one call.
const (
	MaxSQLStatementChars  = 100000
	MaxSQLParams          = 100
	MaxSQLRows            = 10000
	MaxSQLColumns         = 256
	MaxSQLColumnNameChars = 128
	MaxSQLTextChars       = 1000000
	MaxSQLBlobBase64Chars = 1333336
	MaxSQLStatements      = 100
	// MaxSQLRequestBytes bounds one call's JSON request and
	// MaxSQLResultBytes the values one call returns (host limits, so one
	// call cannot hold the host's memory; a bigger result fails sql_error).
	MaxSQLRequestBytes = 64 << 20
	MaxSQLResultBytes  = 64 << 20
)

// integerPattern is the tagged integer's decimal form.
var integerPattern = regexp.MustCompile(`^(?:0|-?[1-9][0-9]{0,18})$`)

// value is one tagged edge.sql value (v1alpha1 family): type is null,
// integer, real, text or blob; integer's value is decimal text, real's a
// JSON number, text's a string, blob's base64.
type value struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value,omitempty"`
	Base64 *string         `json:"base64,omitempty"`
}

// bound is a parameter ready to bind: exactly one of its fields is used,
// by kind.
type bound struct {
	kind  string // null, integer, real, text, blob
	i     int64
	f     float64
	bytes []byte
}

func sqlErrorf(format string, a ...any) *Error {
	return errorf(400, "sql_error", format, a...)
}

// decodeParam checks one tagged parameter (params[i]).
func decodeParam(raw json.RawMessage, i int) (bound, *Error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return bound{}, sqlErrorf("params[%d] is not a tagged value {type, …}", i)
	}
	var typ string
	if err := json.Unmarshal(m["type"], &typ); err != nil {
		return bound{}, sqlErrorf("params[%d] has no type: one of null, integer, real, text, blob", i)
	}
	want := map[string]string{"null": "", "integer": "value", "real": "value", "text": "value", "blob": "base64"}
	member, known := want[typ]
	if !known {
		return bound{}, sqlErrorf("params[%d] has type %q: one of null, integer, real, text, blob", i, typ)
	}
	for k := range m {
		if k != "type" && k != member {
			return bound{}, sqlErrorf("params[%d] (%s) has the member %q it does not take", i, typ, k)
		}
	}
	if member != "" && m[member] == nil {
		return bound{}, sqlErrorf("params[%d] (%s) needs its %q member", i, typ, member)
	}
	switch typ {
	case "null":
		return bound{kind: "null"}, nil
	case "integer":
		var s string
		if err := json.Unmarshal(m["value"], &s); err != nil || !integerPattern.MatchString(s) {
			return bound{}, sqlErrorf("params[%d]: an integer's value is canonical decimal text (no sign +, no leading zero, no spaces)", i)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bound{}, sqlErrorf("params[%d]: %s is outside the signed 64-bit range", i, s)
		}
		return bound{kind: "integer", i: n}, nil
	case "real":
		lit := bytes.TrimSpace(m["value"])
		f, err := strconv.ParseFloat(string(lit), 64)
		if len(lit) == 0 || lit[0] == '"' || err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return bound{}, sqlErrorf("params[%d]: a real's value is a finite JSON number", i)
		}
		return bound{kind: "real", f: f}, nil
	case "text":
		var s string
		if err := json.Unmarshal(m["value"], &s); err != nil {
			return bound{}, sqlErrorf("params[%d]: a text's value is a string", i)
		}
		if n := utf8.RuneCountInString(s); n > MaxSQLTextChars {
			return bound{}, sqlErrorf("params[%d]: a text value is at most %d characters; this one has %d", i, MaxSQLTextChars, n)
		}
		return bound{kind: "text", bytes: []byte(s)}, nil
	default: // blob
		var s string
		if err := json.Unmarshal(m["base64"], &s); err != nil {
			return bound{}, sqlErrorf("params[%d]: a blob's base64 is a string", i)
		}
		if len(s) > MaxSQLBlobBase64Chars {
			return bound{}, sqlErrorf("params[%d]: a blob's base64 is at most %d characters; this one has %d", i, MaxSQLBlobBase64Chars, len(s))
		}
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil {
			return bound{}, sqlErrorf("params[%d]: a blob's base64 is padded RFC 4648 base64: %v", i, err)
		}
		return bound{kind: "blob", bytes: b}, nil
	}
}

// out is one result value, written as its tagged JSON.
type out struct {
	kind string
	i    int64
	f    float64
	s    string
}

func (o out) MarshalJSON() ([]byte, error) {
	switch o.kind {
	case "null":
		return []byte(`{"type":"null"}`), nil
	case "integer":
		return []byte(`{"type":"integer","value":"` + strconv.FormatInt(o.i, 10) + `"}`), nil
	case "real":
		v, err := json.Marshal(o.f)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"type":"real","value":`), v...), '}'), nil
	case "text":
		v, err := json.Marshal(o.s)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"type":"text","value":`), v...), '}'), nil
	case "blob":
		return []byte(`{"type":"blob","base64":"` + o.s + `"}`), nil
	}
	return nil, fmt.Errorf("unknown value kind %q", o.kind)
}

// size approximates o's share of a result, for MaxSQLResultBytes.
func (o out) size() int { return 32 + len(o.s) }
