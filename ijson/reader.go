package ijson

import "encoding/json"

// Reader reads a document that passed Check, for the hand-written
// decoders of closed shapes (FastDecoder) and for Decode. It reads only
// what it can read exactly — strings without escapes, values of the
// expected JSON type — and on anything else fails: every read after that
// returns zero values and OK reports false, so the caller takes the
// library's path, which alone decides the result and its errors.
// Strings it returns share one copy of the document; Raw values alias
// the document itself (spec/decisions/0040-create-path-fast-paths.md).
type Reader struct {
	data []byte
	s    string // data as a string, made on the first String
	i    int
	bad  bool
}

// NewReader starts reading the checked document data.
func NewReader(data []byte) *Reader { return &Reader{data: data} }

// FastDecoder is a type with a hand-written decoder (ReadIJSON) that
// UnmarshalChecked tries before the library: it reads the whole checked
// document data with a Reader and reports whether every read was exact
// (Reader.OK); only then may it have changed the receiver, which
// UnmarshalChecked hands it only when it is zero (it replaces what it
// reads into, where the library merges). The result
// must equal the library's for every document it accepts (each
// implementation's tests compare the two).
type FastDecoder interface {
	ReadIJSON(data []byte) bool
}

// OK reports whether every read so far was exact and the document is
// read to its end.
func (r *Reader) OK() bool {
	r.ws()
	return !r.bad && r.i == len(r.data)
}

// Fail makes the read fail (a member or type the decoder does not read).
func (r *Reader) Fail() { r.bad = true }

// Failed reports whether a read failed.
func (r *Reader) Failed() bool { return r.bad }

func (r *Reader) ws() { r.i = skipSpace(r.data, r.i) }

// Kind is the first byte of the next value ('{', '[', '"', 'n', 't',
// 'f', or '0' for a number), 0 after a failure.
func (r *Reader) Kind() byte {
	r.ws()
	if r.bad || r.i >= len(r.data) {
		return 0
	}
	switch c := r.data[r.i]; {
	case c == '{' || c == '[' || c == '"' || c == 'n' || c == 't' || c == 'f':
		return c
	case c == '-' || ('0' <= c && c <= '9'):
		return '0'
	}
	r.bad = true // not the start of a value: a document that was not checked
	return 0
}

// Object starts reading an object; anything else fails.
func (r *Reader) Object() {
	if r.Kind() != '{' {
		r.bad = true
		return
	}
	r.i++
}

// Member returns the name of the next member of the object being read
// (its value is read next), or false at the object's end, which it
// consumes, or after a failure. A name with an escape fails.
func (r *Reader) Member() (string, bool) {
	start, end, ok := r.member()
	if !ok {
		return "", false
	}
	return r.str(start, end), true
}

// MemberName is Member for a name that is only compared, never kept: its
// bytes alias the document, of which no copy is made.
func (r *Reader) MemberName() ([]byte, bool) {
	start, end, ok := r.member()
	if !ok {
		return nil, false
	}
	return r.data[start:end], true
}

func (r *Reader) member() (start, end int, ok bool) {
	r.ws()
	if r.bad || r.i >= len(r.data) {
		r.bad = true
		return 0, 0, false
	}
	switch r.data[r.i] {
	case '}':
		r.i++
		return 0, 0, false
	case ',':
		r.i++
		r.ws()
	}
	start, end = r.span()
	r.ws()
	r.i++ // ':'
	return start, end, !r.bad
}

// Array starts reading an array; anything else fails.
func (r *Reader) Array() {
	if r.Kind() != '[' {
		r.bad = true
		return
	}
	r.i++
}

// Next reports whether the array being read has another element (read
// next), consuming its end when not.
func (r *Reader) Next() bool {
	r.ws()
	if r.bad || r.i >= len(r.data) {
		r.bad = true
		return false
	}
	switch r.data[r.i] {
	case ']':
		r.i++
		return false
	case ',':
		r.i++
	}
	return true
}

// String reads a string without escapes; anything else fails.
func (r *Reader) String() string {
	start, end := r.span()
	if r.bad {
		return ""
	}
	return r.str(start, end)
}

// StringCopy is String for the one string a read keeps: a copy of it
// alone, not of the whole document.
func (r *Reader) StringCopy() string {
	start, end := r.span()
	if r.bad {
		return ""
	}
	return string(r.data[start:end])
}

// span reads a string without escapes and returns where its content
// lies in the document; anything else fails.
func (r *Reader) span() (start, end int) {
	if r.Kind() != '"' {
		r.bad = true
		return 0, 0
	}
	start = r.i + 1
	end = start
	for end < len(r.data) && r.data[end] != '"' && r.data[end] != '\\' {
		end++
	}
	if end >= len(r.data) || r.data[end] != '"' {
		r.bad = true
		return 0, 0
	}
	r.i = end + 1
	return start, end
}

// str is the document's bytes start:end as a string, sharing the one
// copy of the document the Reader makes.
func (r *Reader) str(start, end int) string {
	if r.s == "" {
		r.s = string(r.data)
	}
	return r.s[start:end]
}

// Raw reads any value but null and returns its bytes, which alias the
// document; null fails.
func (r *Reader) Raw() []byte {
	k := r.Kind()
	if k == 0 || k == 'n' {
		r.bad = true
		return nil
	}
	start := r.i
	r.skip()
	return r.data[start:r.i:r.i]
}

// Skip passes the next value, whatever it is.
func (r *Reader) Skip() {
	if r.Kind() == 0 {
		r.bad = true
		return
	}
	r.skip()
}

// skip passes one value of the checked document (bounded, so a document
// that was not checked fails the read instead of ending the program).
func (r *Reader) skip() {
	defer func() {
		if r.i > len(r.data) {
			r.i, r.bad = len(r.data), true
		}
	}()
	depth := 0
	for r.i < len(r.data) {
		switch c := r.data[r.i]; c {
		case '"':
			for r.i++; r.i < len(r.data) && r.data[r.i] != '"'; r.i++ {
				if r.data[r.i] == '\\' {
					r.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				r.bad = true
				return
			}
		default:
			if depth == 0 && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				// a scalar at the top: a number or literal ends at a delimiter
				for r.i < len(r.data) && !delimiter(r.data[r.i]) {
					r.i++
				}
				return
			}
		}
		r.i++
		if depth == 0 {
			return
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ',', ':', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// value reads any value as Decode returns it.
func (r *Reader) value() any {
	switch r.Kind() {
	case '{':
		r.i++
		m := map[string]any{}
		for {
			name, ok := r.Member()
			if !ok {
				return m
			}
			m[name] = r.value()
		}
	case '[':
		r.i++
		a := []any{}
		for r.Next() {
			a = append(a, r.value())
		}
		return a
	case '"':
		return r.String()
	case 't':
		r.i += len("true")
		return true
	case 'f':
		r.i += len("false")
		return false
	case 'n':
		r.i += len("null")
		return nil
	case '0':
		start := r.i
		r.skip()
		return json.Number(r.str(start, r.i))
	}
	r.bad = true
	return nil
}

// decodeFast is Decode of checked data by a Reader, false when it fails
// (FuzzDecodeAgreement checks it agrees with the library).
func decodeFast(data []byte) (any, bool) {
	r := Reader{data: data}
	v := r.value()
	return v, r.OK()
}
