package ijson

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// quickValid reports whether data passes every rule of Check, in one
// validating read (jsontext.Value.IsValid: RFC 7493 syntax, UTF-8, escapes,
// unique member names, one value and no trailing data) plus a byte scan of
// what that read leaves: nesting depth (MaxDepth) and number literals
// (finite, not negative zero; spec/host-api-v1alpha3.md §3.1). It only ever
// accepts; a false sends the document to checkTokens for the exact error
// (FuzzQuickAgreement checks the two agree).
func quickValid(data []byte) bool {
	if !jsontext.Value(data).IsValid() {
		return false
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"': // skip the string; it is valid, so `\"` is the only escaped quote
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return false
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || ('0' <= c && c <= '9'):
			j := i + 1
			simple := true // only digits: an integer
			for ; j < len(data) && isNumberByte(data[j]); j++ {
				if data[j] < '0' || data[j] > '9' {
					simple = false
				}
			}
			if !finiteNonZero(data[i:j], simple) {
				return false
			}
			i = j - 1
		}
	}
	return true
}

func isNumberByte(c byte) bool {
	return ('0' <= c && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// finiteNonZero is checkNumber's rule on a valid number literal: it parses
// as a finite binary64 and is not a negative zero. An integer of at most
// 15 digits is always finite, and is negative zero only as "-0".
func finiteNonZero(lit []byte, integer bool) bool {
	if integer && len(lit) <= 16 {
		return !(len(lit) == 2 && lit[0] == '-' && lit[1] == '0')
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return err == nil && !(f == 0 && lit[0] == '-')
}
