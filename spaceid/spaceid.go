// Package spaceid validates SpaceID, the opaque, case-sensitive scope identity
// of decision 0003 (host API spec/host-api-v1alpha3.md §1.1).
//
// A SpaceID is valid UTF-8 of 1..255 code points; it contains no C0 control,
// '/', DEL or C1 control, and neither starts nor ends with Unicode White_Space
// or U+FEFF. Values are never trimmed, normalised or case-folded: "Prod",
// "prod" and "Prod North" are three different spaces.
//
// The Go validator and the JSON Schema (spec/schemas/space-id.schema.json)
// are both generated from one code-point table.
package spaceid

//go:generate go run ./internal/genschema -o ../spec/schemas/space-id.schema.json

import (
	"fmt"
	"unicode/utf8"
)

// MaxCodePoints is the maximum length of a SpaceID, in code points.
const MaxCodePoints = 255

// Rule names the SpaceID rule an invalid value breaks.
type Rule string

const (
	RuleEmpty              Rule = "empty"                // no code points
	RuleTooLong            Rule = "too-long"             // more than MaxCodePoints code points
	RuleInvalidUTF8        Rule = "invalid-utf8"         // not valid UTF-8
	RuleForbiddenCodePoint Rule = "forbidden-code-point" // control or '/' at any position
	RuleEdgeCodePoint      Rule = "edge-code-point"      // White_Space or U+FEFF first or last
)

// Error describes why a value is not a SpaceID.
type Error struct {
	Value string // the value exactly as given
	Rule  Rule
	// Index is the 0-based code-point offset of the problem: the offending
	// code point, the first undecodable byte (RuleInvalidUTF8), the first
	// code point past the limit (RuleTooLong), or 0 (RuleEmpty).
	Index int
	// ByteOffset is the byte offset matching Index.
	ByteOffset int
	// CodePoint is the offending code point for RuleForbiddenCodePoint and
	// RuleEdgeCodePoint; otherwise -1.
	CodePoint rune
}

func (e *Error) Error() string {
	v := quote(e.Value)
	switch e.Rule {
	case RuleEmpty:
		return fmt.Sprintf("space %s: empty; a SpaceID needs 1 to %d code points", v, MaxCodePoints)
	case RuleTooLong:
		return fmt.Sprintf("space %s: too long (%d code points); a SpaceID has at most %d code points; shorten it",
			v, utf8.RuneCountInString(e.Value), MaxCodePoints)
	case RuleInvalidUTF8:
		return fmt.Sprintf("space %s: byte %d (code point %d) is not valid UTF-8; a SpaceID must be valid UTF-8; re-encode it",
			v, e.ByteOffset, e.Index)
	case RuleForbiddenCodePoint:
		what, _ := sets[anywhere].lookup(e.CodePoint)
		return fmt.Sprintf("space %s: code point %d is %U (%s), which is not allowed anywhere in a SpaceID; remove it",
			v, e.Index, e.CodePoint, what)
	case RuleEdgeCodePoint:
		what, _ := sets[edge].lookup(e.CodePoint)
		pos := "first"
		if e.Index > 0 {
			pos = "last"
		}
		return fmt.Sprintf("space %s: code point %d is %U (%s), which is not allowed as the %s code point of a SpaceID; remove it (SpaceIDs are never trimmed)",
			v, e.Index, e.CodePoint, what, pos)
	}
	return fmt.Sprintf("space %s: invalid SpaceID (%s at code point %d)", v, e.Rule, e.Index)
}

// quote renders v for a message, cutting very long values.
func quote(v string) string {
	const keep = 64
	n, i := 0, 0
	for i < len(v) && n < keep {
		_, size := utf8.DecodeRuneInString(v[i:])
		i += size
		n++
	}
	if i < len(v) {
		return fmt.Sprintf("%q...", v[:i])
	}
	return fmt.Sprintf("%q", v)
}

// Validate reports whether s is a SpaceID (decision 0003, spec/host-api-v1alpha3.md §1.1). It
// returns nil or an *Error naming the rule broken at the earliest code-point
// offset. It never modifies, trims or normalises s.
func Validate(s string) error {
	if s == "" {
		return &Error{Value: s, Rule: RuleEmpty, CodePoint: -1}
	}
	n, last, lastByte := 0, rune(0), 0
	for i := 0; i < len(s); n++ {
		if n == MaxCodePoints {
			return &Error{Value: s, Rule: RuleTooLong, Index: n, ByteOffset: i, CodePoint: -1}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return &Error{Value: s, Rule: RuleInvalidUTF8, Index: n, ByteOffset: i, CodePoint: -1}
		}
		if _, bad := sets[anywhere].lookup(r); bad {
			return &Error{Value: s, Rule: sets[anywhere].rule, Index: n, ByteOffset: i, CodePoint: r}
		}
		if n == 0 {
			if _, bad := sets[edge].lookup(r); bad {
				return &Error{Value: s, Rule: sets[edge].rule, Index: n, ByteOffset: i, CodePoint: r}
			}
		}
		last, lastByte = r, i
		i += size
	}
	if _, bad := sets[edge].lookup(last); bad {
		return &Error{Value: s, Rule: sets[edge].rule, Index: n - 1, ByteOffset: lastByte, CodePoint: last}
	}
	return nil
}

// Valid reports whether Validate(s) returns nil.
func Valid(s string) bool { return Validate(s) == nil }
