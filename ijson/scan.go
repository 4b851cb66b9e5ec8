package ijson

import "unicode/utf8"

// scanValid reports whether data passes every rule of Check, read once by
// hand with no allocation: RFC 8259 syntax, UTF-8, escapes, unique member
// names, nesting depth, finite numbers that are not negative zero, and no
// trailing data (spec/host-api-v1alpha3.md §3.1). Like quickValid it only
// ever accepts: it declines, and leaves the document to quickValid and
// checkTokens, on anything it does not read itself — a \u escape of a
// surrogate, an escaped member name, more than maxScanNames member names
// open at once (FuzzScanAgreement checks it never accepts what they
// refuse; spec/decisions/0040-create-path-fast-paths.md).
func scanValid(data []byte) bool {
	var v validator
	v.data = data
	v.ws()
	if !v.value(0) {
		return false
	}
	v.ws()
	return v.i == len(data)
}

// maxScanNames bounds the member names of the open objects scanValid
// holds to compare for duplicates (pairwise); more take the library's
// check.
const maxScanNames = 64

type validator struct {
	data  []byte
	i     int
	names [maxScanNames]struct{ start, end int } // member names of the open objects, innermost last
	n     int                                    // names in use
}

func (v *validator) ws() { v.i = skipSpace(v.data, v.i) }

// skipSpace returns the offset of the first byte at or after i in data
// that is not JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func (v *validator) value(depth int) bool {
	if v.i >= len(v.data) {
		return false
	}
	switch c := v.data[v.i]; {
	case c == '{':
		return depth < MaxDepth && v.object(depth+1)
	case c == '[':
		return depth < MaxDepth && v.array(depth+1)
	case c == '"':
		_, ok := v.string()
		return ok
	case c == '-' || ('0' <= c && c <= '9'):
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *validator) literal(lit string) bool {
	if len(v.data)-v.i < len(lit) || string(v.data[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

func (v *validator) object(depth int) bool {
	v.i++ // {
	base := v.n
	defer func() { v.n = base }()
	v.ws()
	if v.i < len(v.data) && v.data[v.i] == '}' {
		v.i++
		return true
	}
	for {
		if v.i >= len(v.data) || v.data[v.i] != '"' {
			return false
		}
		start := v.i + 1
		name, ok := v.string()
		if !ok || name == nil || v.n == maxScanNames {
			return false // nil: an escaped name, compared by the library
		}
		for _, seen := range v.names[base:v.n] {
			if string(v.data[seen.start:seen.end]) == string(name) {
				return false
			}
		}
		v.names[v.n].start, v.names[v.n].end = start, start+len(name)
		v.n++
		v.ws()
		if v.i >= len(v.data) || v.data[v.i] != ':' {
			return false
		}
		v.i++
		v.ws()
		if !v.value(depth) {
			return false
		}
		if more, ok := v.more('}'); !more {
			return ok
		}
	}
}

// more reads what follows a member or element: a ',' (more, true), the
// container's end close (false, true) or anything else (false, false).
func (v *validator) more(close byte) (more, ok bool) {
	v.ws()
	if v.i >= len(v.data) {
		return false, false
	}
	switch v.data[v.i] {
	case ',':
		v.i++
		v.ws()
		return true, true
	case close:
		v.i++
		return false, true
	}
	return false, false
}

func (v *validator) array(depth int) bool {
	v.i++ // [
	v.ws()
	if v.i < len(v.data) && v.data[v.i] == ']' {
		v.i++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		if more, ok := v.more(']'); !more {
			return ok
		}
	}
}

// string reads a string; raw is its content when it holds no escape, nil
// when it does (or is invalid).
func (v *validator) string() (raw []byte, ok bool) {
	v.i++ // "
	start, escaped := v.i, false
	for v.i < len(v.data) {
		c := v.data[v.i]
		for c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && v.i+1 < len(v.data) {
			v.i++
			c = v.data[v.i]
		}
		switch {
		case c == '"':
			v.i++
			if escaped {
				return nil, true
			}
			return v.data[start : v.i-1], true
		case c == '\\':
			if v.i+1 >= len(v.data) {
				return nil, false
			}
			escaped = true
			switch v.data[v.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i += 2
			case 'u':
				if len(v.data)-v.i < 6 {
					return nil, false
				}
				r := rune(0)
				for _, h := range v.data[v.i+2 : v.i+6] {
					switch {
					case '0' <= h && h <= '9':
						r = r<<4 | rune(h-'0')
					case 'a' <= h && h <= 'f':
						r = r<<4 | rune(h-'a'+10)
					case 'A' <= h && h <= 'F':
						r = r<<4 | rune(h-'A'+10)
					default:
						return nil, false
					}
				}
				if 0xD800 <= r && r <= 0xDFFF {
					return nil, false // a surrogate: the library tells a pair from a lone one
				}
				v.i += 6
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			v.i++
		default:
			r, n := utf8.DecodeRune(v.data[v.i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false
			}
			v.i += n
		}
	}
	return nil, false
}

// number reads a number literal of RFC 8259 grammar and applies the
// I-JSON rule (finiteNonZero).
func (v *validator) number() bool {
	start, integer := v.i, true
	if v.data[v.i] == '-' {
		v.i++
	}
	switch {
	case v.i < len(v.data) && v.data[v.i] == '0':
		v.i++
	case v.i < len(v.data) && '1' <= v.data[v.i] && v.data[v.i] <= '9':
		v.digits()
	default:
		return false
	}
	if v.i < len(v.data) && v.data[v.i] == '.' {
		integer = false
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(v.data) && (v.data[v.i] == 'e' || v.data[v.i] == 'E') {
		integer = false
		v.i++
		if v.i < len(v.data) && (v.data[v.i] == '+' || v.data[v.i] == '-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return finiteNonZero(v.data[start:v.i], integer)
}

// digits reads one or more decimal digits.
func (v *validator) digits() bool {
	start := v.i
	for v.i < len(v.data) && '0' <= v.data[v.i] && v.data[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}
