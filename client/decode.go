package client

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/takoform/takoform/ijson"
)

// decodeAnswer strictly decodes a 2xx JSON answer into v (closed, strict
// I-JSON, spec/host-api-v1alpha3.md §3.1) and checks that the members at the given JSON
// pointers are present and not null — members whose zero value would read
// as a legitimate answer (booleans, lists). Failures are *ProtocolError.
func (c *Client) decodeAnswer(r *request, resp *response, v any, what string, required ...string) error {
	if len(resp.body) == 0 {
		return c.protocolError(r, resp.status, fmt.Sprintf("HTTP %d has an empty body; a %s was expected", resp.status, what), nil)
	}
	if err := decodeStrict(resp.body, v, required...); err != nil {
		return c.protocolError(r, resp.status, "the answer is not a valid "+what, err)
	}
	return nil
}

// decodeStrict is ijson.Unmarshal plus a presence check of required. data
// is checked once; the check reads the raw document without decoding it
// again (firstMissing).
func decodeStrict(data []byte, v any, required ...string) error {
	if err := ijson.Unmarshal(data, v); err != nil {
		return err
	}
	if p, ok := firstMissing(data, required); ok {
		return fmt.Errorf("required member %s is absent or null", p)
	}
	return nil
}

// firstMissing returns the first pointer of required that is absent or
// null in the checked document data. Members of the top-level object
// ("/name", the usual case) are found in one pass over it, skipping each
// value; other pointers are walked one by one (rawMember).
func firstMissing(data jsontext.Value, required []string) (string, bool) {
	var set [8]bool // set[i]: required[i] is present and not null
	shallow := len(required) <= len(set) && data.Kind() == '{'
	for _, p := range required {
		shallow = shallow && p != "" && !strings.Contains(p[1:], "/")
	}
	if !shallow {
		for _, p := range required {
			if m, ok := rawMember(data, p); !ok || m.Kind() == 'n' {
				return p, true
			}
		}
		return "", false
	}
	if len(required) > 0 && !membersSet(data, required, &set) {
		set = [8]bool{}
		d := jsontext.NewDecoder(bytes.NewReader(data))
		if _, err := d.ReadToken(); err == nil {
			for d.PeekKind() == '"' {
				tok, err := d.ReadToken()
				if err != nil {
					break
				}
				name := tok.String() // before PeekKind, which voids tok
				null := d.PeekKind() == 'n'
				for i, p := range required {
					set[i] = set[i] || (!null && p[1:] == name)
				}
				if d.SkipValue() != nil {
					break
				}
			}
		}
	}
	for i, p := range required {
		if !set[i] {
			return p, true
		}
	}
	return "", false
}

// membersSet is firstMissing's pass over the top-level members by an
// ijson.Reader, false when it cannot read them (an escaped name) and the
// token reader must.
func membersSet(data []byte, required []string, set *[8]bool) bool {
	r := ijson.NewReader(data)
	r.Object()
	for name, ok := r.MemberName(); ok; name, ok = r.MemberName() {
		null := r.Kind() == 'n'
		for i, p := range required {
			set[i] = set[i] || (!null && p[1:] == string(name))
		}
		r.Skip()
	}
	return r.OK()
}

// rawMember walks a JSON pointer through checked JSON, as lookup does
// through a decoded document, and returns the value's bytes. Each level
// is read once, skipping the members and elements before the one named.
func rawMember(doc jsontext.Value, ptr string) (jsontext.Value, bool) {
	if ptr == "" {
		return doc, true
	}
	for tok := range strings.SplitSeq(ptr[1:], "/") {
		kind := doc.Kind()
		index := -1
		if kind == '[' {
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 {
				return nil, false
			}
			index = i
		} else if kind != '{' {
			return nil, false
		}
		d := jsontext.NewDecoder(bytes.NewReader(doc))
		if _, err := d.ReadToken(); err != nil {
			return nil, false
		}
		found := false
		for n := 0; !found && d.PeekKind() != '}' && d.PeekKind() != ']'; n++ {
			if kind == '{' {
				name, err := d.ReadToken()
				if err != nil {
					return nil, false
				}
				found = name.String() == tok
			} else {
				found = n == index
			}
			if !found {
				if d.SkipValue() != nil {
					return nil, false
				}
			}
		}
		if !found {
			return nil, false
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		doc = v
	}
	return doc, true
}

// lookup walks a JSON pointer through a document decoded by ijson.Decode.
// Member names used here need no RFC 6901 escaping.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		switch n := cur.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			cur = n[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// missingMembers lists the pointers that are absent or null in doc.
func missingMembers(doc any, ptrs ...string) []string {
	var out []string
	for _, p := range ptrs {
		if v, ok := lookup(doc, p); !ok || v == nil {
			out = append(out, p)
		}
	}
	return out
}

// firstNull returns the pointer of the first null value in v (members in
// sorted order).
func firstNull(v any, at string) (string, bool) {
	switch n := v.(type) {
	case nil:
		return at, true
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := firstNull(n[k], at+"/"+k); ok {
				return p, true
			}
		}
	case []any:
		for i, x := range n {
			if p, ok := firstNull(x, at+"/"+strconv.Itoa(i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

// isObject reports whether raw JSON is an object.
func isObject(raw []byte) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}
