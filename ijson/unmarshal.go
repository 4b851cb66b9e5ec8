package ijson

import (
	"errors"
	"fmt"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
)

// Unmarshal checks data and decodes it into v as a closed document: member
// names match exactly (case-sensitive) and a member v does not define is
// refused with RuleUnknownMember, a value of the wrong type with
// RuleWrongType. Errors are *Error naming the JSON pointer.
func Unmarshal(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	return UnmarshalChecked(data, v)
}

// UnmarshalChecked is Unmarshal for data that already passed Check (the
// host checks a mutating body once, when it reads its replay namespace):
// the same closed decoding and errors, without checking data again. A v
// that is a FastDecoder pointing at a zero value reads data itself first;
// what it declines, and every v holding values already (which the library
// merges into), takes the library.
func UnmarshalChecked(data []byte, v any) error {
	if f, ok := v.(FastDecoder); ok && zeroTarget(v) && f.ReadIJSON(data) {
		return nil
	}
	return unmarshalLibrary(data, v)
}

// unmarshalLibrary is UnmarshalChecked's library path
// (go-json-experiment/json, unknown members refused): what a FastDecoder
// declines, and its test oracle.
func unmarshalLibrary(data []byte, v any) error {
	err := jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
	if err == nil {
		return nil
	}
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		e := &Error{Pointer: string(se.JSONPointer), Offset: se.ByteOffset}
		if se.Err != nil && errors.Is(se.Err, jsonv2.ErrUnknownName) {
			e.Rule = RuleUnknownMember
			e.Detail = fmt.Sprintf("member %q is not part of this document; remove it", se.JSONPointer.LastToken())
		} else {
			e.Rule = RuleWrongType
			want := "another type"
			if se.GoType != nil {
				want = se.GoType.String()
			}
			e.Detail = fmt.Sprintf("a JSON %s cannot be read here (want %s); fix the member's type", kindName(byte(se.JSONKind)), want)
		}
		return e
	}
	return &Error{Rule: RuleSyntax, Detail: err.Error()}
}

func kindName(k byte) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// zeroTarget reports whether v is a non-nil pointer to a zero value.
func zeroTarget(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().IsZero()
}
