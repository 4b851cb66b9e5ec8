package client

import "testing"

// decodeStrict refuses a document whose required member is absent or null
// at any depth, through objects and arrays, and accepts one where it is set.
func TestDecodeStrictRequired(t *testing.T) {
	cases := []struct {
		doc, ptr string
		ok       bool
	}{
		{`{"error":{"code":"x"}}`, "/error/code", true},
		{`{"error":{"code":null}}`, "/error/code", false},
		{`{"error":{}}`, "/error/code", false},
		{`{"error":"flat"}`, "/error/code", false},
		{`{"list":[{"a":false}]}`, "/list/0/a", true},
		{`{"list":[{"a":false}]}`, "/list/1/a", false},
		{`{"list":[{"a":false}]}`, "/list/x", false},
		{`{"done":false}`, "/done", true},
		{`{"done":null}`, "/done", false},
	}
	for _, c := range cases {
		var v map[string]any
		err := decodeStrict([]byte(c.doc), &v, c.ptr)
		if (err == nil) != c.ok {
			t.Errorf("decodeStrict(%s, %s) = %v, want ok %v", c.doc, c.ptr, err, c.ok)
		}
	}
}
