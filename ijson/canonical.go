package ijson

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// CanonicalValue is Canonical(json.Marshal(v)) for a value as Decode
// returns it (maps, slices, strings, json.Number, booleans, nil): written
// directly when appendCanonical can (the common case), else through the
// library. Errors are those of json.Marshal and Canonical.
func CanonicalValue(v any) ([]byte, error) {
	if out, ok := appendCanonical(nil, v); ok {
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode value for canonicalisation: %w", err)
	}
	return Canonical(b)
}

// appendCanonical appends the RFC 8785 text of v to b as jcs.Transform
// writes it: members sorted, strings with only JCS's escapes, numbers in
// ECMAScript form (jcs.NumberToJSON). It declines (false) a type other
// than Decode's, a member name outside ASCII (JCS sorts by UTF-16 code
// units, which only for ASCII is byte order), a string that is not UTF-8
// and a number that does not parse (TestDecodeAgreement and
// FuzzDecodeAgreement compare it with the library;
// spec/decisions/0040-create-path-fast-paths.md).
func appendCanonical(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case string:
		return appendCanonicalString(b, x)
	case json.Number:
		return appendCanonicalNumber(b, string(x))
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, e); !ok {
				return nil, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		var buf [16]string
		keys := buf[:0]
		for k := range x {
			for i := 0; i < len(k); i++ {
				if k[i] >= utf8.RuneSelf {
					return nil, false
				}
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendCanonicalString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendCanonical(b, x[k]); !ok {
				return nil, false
			}
		}
		return append(b, '}'), true
	}
	return nil, false
}

// appendCanonicalString is jcs's string form: `"`, `\` and the controls
// escaped (\b \f \n \r \t, others \u00xx), every other byte as it is.
func appendCanonicalString(b []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return nil, false // json.Marshal would write U+FFFD first
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), true
}

// appendCanonicalNumber writes a number literal as jcs does: an integer
// of at most 15 digits (exact in binary64) as it is, anything else parsed
// and formatted by jcs.NumberToJSON.
func appendCanonicalNumber(b []byte, lit string) ([]byte, bool) {
	if plainInteger(lit) {
		return append(b, lit...), true
	}
	if !numberLiteral(lit) { // ParseFloat reads more (+1, .5, 0x1p4, 1_0) than JSON writes
		return nil, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil, false
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return nil, false
	}
	return append(b, s...), true
}

// plainInteger reports whether lit is -?[1-9][0-9]{0,14} or 0.
func plainInteger(lit string) bool {
	d := lit
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "0" {
		return lit == "0"
	}
	if len(d) == 0 || len(d) > 15 || d[0] == '0' {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// numberLiteral reports whether lit is an RFC 8259 number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberLiteral(lit string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(lit) && lit[i] >= '0' && lit[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	switch {
	case i < len(lit) && lit[i] == '0':
		i++
	case i < len(lit) && lit[i] >= '1' && lit[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(lit) && lit[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(lit)
}
