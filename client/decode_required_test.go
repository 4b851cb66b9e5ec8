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

// firstMissing names the same first absent-or-null pointer as walking
// each pointer with rawMember, through its one-pass top-level path too.
func TestFirstMissingAgreesWithRawMember(t *testing.T) {
	docs := []string{`{}`, `[]`, `"x"`, `{"a":1,"b":null}`, `{"b":{"a":null},"a":[null]}`, `{"x":{"y":[1,{"z":2}]},"a":false}`, `{"a\u0062":1}`, ` {"a" : 0 , "c":""} `}
	sets := [][]string{nil, {"/a"}, {"/b"}, {"/a", "/b"}, {"/c", "/a"}, {"/a", "/ab"}, {"/x/y/1/z", "/a"}, {"/x", "/a", "/c"}, {""}, {"/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h", "/i"}}
	for _, doc := range docs {
		for _, ptrs := range sets {
			want, wantOK := "", false
			for _, p := range ptrs {
				if m, ok := rawMember([]byte(doc), p); !ok || m.Kind() == 'n' {
					want, wantOK = p, true
					break
				}
			}
			if got, ok := firstMissing([]byte(doc), ptrs); got != want || ok != wantOK {
				t.Errorf("firstMissing(%s, %q) = %q %v, want %q %v", doc, ptrs, got, ok, want, wantOK)
			}
		}
	}
}
