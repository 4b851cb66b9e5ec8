// Package ijson is the one strict JSON reader and the one digest function of
// Takoform.
//
// Every definition, request and response is read through Check (or Decode /
// Unmarshal, which call it): exactly one I-JSON document (RFC 7493) with no
// duplicate member names, valid UTF-8, no lone surrogate escapes, only finite
// numbers and no negative zero, at most MaxDepth nested containers, and no
// trailing data (spec/host-api-v1alpha3.md §3.1). Digest is the RFC 8785 (JCS) + SHA-256
// construction used for schema digests, spec digests and manifest digests
// (spec/host-api-v1alpha3.md §1.3).
package ijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth is the deepest nesting of arrays and objects a document may have
// (spec/host-api-v1alpha3.md §3.1: 256 containers).
const MaxDepth = 256

// Rule names the I-JSON rule a document broke.
type Rule string

// The rules Check enforces.
const (
	RuleEmpty         Rule = "empty"          // no JSON value at all
	RuleSyntax        Rule = "syntax"         // not JSON (RFC 8259)
	RuleInvalidUTF8   Rule = "invalid-utf8"   // bytes that are not UTF-8
	RuleInvalidEscape Rule = "invalid-escape" // \u escape naming a lone surrogate, or a bad escape
	RuleDuplicateName Rule = "duplicate-name" // one object names a member twice
	RuleNonFinite     Rule = "non-finite"     // number outside IEEE 754 binary64
	RuleNegativeZero  Rule = "negative-zero"  // -0 in any spelling
	RuleTooDeep       Rule = "too-deep"       // more than MaxDepth nested containers
	RuleTrailingData  Rule = "trailing-data"  // anything but whitespace after the value
	RuleUnknownMember Rule = "unknown-member" // member a closed object does not define
	RuleWrongType     Rule = "wrong-type"     // value of the wrong JSON type for its member
)

// Error is a refused document: the rule, where (a JSON pointer, RFC 6901, ""
// for the whole document, and the byte offset) and what to do about it.
type Error struct {
	Rule    Rule
	Pointer string
	Offset  int64
	Detail  string
}

func (e *Error) Error() string {
	where := "at the document root"
	if e.Pointer != "" {
		where = fmt.Sprintf("at %s", e.Pointer)
	}
	return fmt.Sprintf("JSON %s (byte %d): %s [%s]", where, e.Offset, e.Detail, e.Rule)
}

// Check reports whether data is exactly one strict I-JSON document; it
// returns nil or an *Error. A valid document is accepted by scanValid
// (or, for what that declines, quickValid) in one pass; anything they do
// not accept is read again token by token (checkTokens), which alone
// decides the refusal and its *Error.
func Check(data []byte) error {
	if scanValid(data) || quickValid(data) {
		return nil
	}
	return checkTokens(data)
}

// checkTokens is Check reading data token by token: the rules in order
// and the *Error of the first one broken.
func checkTokens(data []byte) error {
	badUTF8 := -1
	if !utf8.Valid(data) {
		badUTF8 = firstInvalidUTF8(data)
	}
	d := jsontext.NewDecoder(bytes.NewReader(data))
	seen := false
	for {
		if seen && d.StackDepth() == 0 {
			break
		}
		tok, err := d.ReadToken()
		if err != nil {
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				if !seen {
					return &Error{Rule: RuleEmpty, Offset: d.InputOffset(), Detail: "the body holds no JSON value; send one JSON document"}
				}
				return &Error{Rule: RuleSyntax, Pointer: string(d.StackPointer()), Offset: d.InputOffset(), Detail: "the document ends before its last value is complete"}
			}
			return classify(err, badUTF8)
		}
		seen = true
		if d.StackDepth() > MaxDepth {
			return &Error{Rule: RuleTooDeep, Pointer: string(d.StackPointer()), Offset: d.InputOffset(),
				Detail: fmt.Sprintf("arrays and objects nest deeper than %d levels; flatten the document", MaxDepth)}
		}
		if tok.Kind() == '0' {
			if e := checkNumber(tok.String(), d); e != nil {
				return e
			}
		}
	}
	_, err := d.ReadToken()
	if err == io.EOF {
		return nil
	}
	off := d.InputOffset()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off = se.ByteOffset
	}
	if badUTF8 >= 0 && int64(badUTF8) >= off {
		return &Error{Rule: RuleInvalidUTF8, Offset: int64(badUTF8), Detail: "the bytes after the document are not UTF-8; send UTF-8 only"}
	}
	return &Error{Rule: RuleTrailingData, Offset: off, Detail: "data follows the JSON value; send exactly one JSON document"}
}

func checkNumber(lit string, d *jsontext.Decoder) *Error {
	f, err := strconv.ParseFloat(lit, 64)
	ptr := string(d.StackPointer())
	if err != nil {
		return &Error{Rule: RuleNonFinite, Pointer: ptr, Offset: d.InputOffset(),
			Detail: fmt.Sprintf("number %s is outside IEEE 754 double precision; use a finite number", abbreviate(lit))}
	}
	if f == 0 && strings.HasPrefix(lit, "-") {
		return &Error{Rule: RuleNegativeZero, Pointer: ptr, Offset: d.InputOffset(),
			Detail: fmt.Sprintf("number %s is negative zero, which I-JSON does not carry; write 0", abbreviate(lit))}
	}
	return nil
}

func classify(err error, badUTF8 int) *Error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return &Error{Rule: RuleSyntax, Detail: err.Error()}
	}
	e := &Error{Pointer: string(se.JSONPointer), Offset: se.ByteOffset}
	msg := se.Err.Error()
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		e.Rule = RuleDuplicateName
		e.Detail = fmt.Sprintf("member %q appears twice in one object; keep one", se.JSONPointer.LastToken())
	case badUTF8 >= 0 && strings.Contains(msg, "UTF-8"):
		e.Rule = RuleInvalidUTF8
		e.Offset = int64(badUTF8)
		e.Detail = "the bytes are not valid UTF-8; send UTF-8 text"
	case strings.Contains(msg, "surrogate") || strings.Contains(msg, "escape"):
		e.Rule = RuleInvalidEscape
		e.Detail = "a string escape is invalid (a lone UTF-16 surrogate or an unknown escape); escape only whole code points"
	default:
		e.Rule = RuleSyntax
		e.Detail = msg + "; send well-formed JSON"
	}
	return e
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Decode checks data and returns its value as generic Go values: objects as
// map[string]any, arrays as []any, numbers as json.Number (exact text),
// strings, booleans and nil. Errors are *Error.
func Decode(data []byte) (any, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	if v, ok := decodeFast(data); ok {
		return v, nil
	}
	return decodeLibrary(data)
}

// decodeLibrary is Decode's library path (encoding/json with UseNumber)
// for checked data: what decodeFast declines, and its test oracle.
func decodeLibrary(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{Rule: RuleSyntax, Detail: err.Error()}
	}
	return v, nil
}

// DecodeObject is Decode for a document that must be one object (a stored
// or canonical spec, spec/host-api-v1alpha3.md §3.1). Errors are *Error; another
// JSON type is RuleWrongType.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Rule: RuleWrongType, Detail: "the document is not a JSON object"}
	}
	return m, nil
}

// As returns v as a T, or T's zero value when v is nil or holds another
// type: how an optional member of a Decode result is read, where absence
// and a member of another type mean the same (the schema refused the latter).
func As[T any](v any) T {
	if t, ok := v.(T); ok {
		return t
	}
	var zero T
	return zero
}
