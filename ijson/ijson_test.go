package ijson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckRefusals(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	cases := []struct {
		name, in string
		rule     Rule
		pointer  string
	}{
		{"empty", "", RuleEmpty, ""},
		{"whitespace only", "  \n", RuleEmpty, ""},
		{"duplicate member", `{"a":1,"a":2}`, RuleDuplicateName, "/a"},
		{"duplicate via escape", `{"spec":{"\u0061":1,"a":2}}`, RuleDuplicateName, "/spec/a"},
		{"nested duplicate", `{"x":[{"k":1},{"k":1,"k":2}]}`, RuleDuplicateName, "/x/1/k"},
		{"invalid utf8 in string", "{\"a\":\"\xff\"}", RuleInvalidUTF8, "/a"},
		{"encoded surrogate bytes", "{\"a\":\"\xed\xa0\x80\"}", RuleInvalidUTF8, "/a"},
		{"lone high surrogate", `{"a":"\ud800"}`, RuleInvalidEscape, "/a"},
		{"lone low surrogate", `{"a":["\udc00"]}`, RuleInvalidEscape, "/a/0"},
		{"unknown escape", `{"a":"\q"}`, RuleInvalidEscape, "/a"},
		{"overflow", `{"n":1e400}`, RuleNonFinite, "/n"},
		{"negative overflow", `[-1e999]`, RuleNonFinite, "/0"},
		{"negative zero", `{"n":-0}`, RuleNegativeZero, "/n"},
		{"negative zero fraction", `{"n":-0.0e5}`, RuleNegativeZero, "/n"},
		{"negative underflow", `{"n":-1e-400}`, RuleNegativeZero, "/n"},
		{"too deep", deep, RuleTooDeep, ""},
		{"trailing value", `{"a":1} {"b":2}`, RuleTrailingData, ""},
		{"trailing garbage", `{"a":1} x`, RuleTrailingData, ""},
		{"trailing invalid utf8", "{\"a\":1}\xff", RuleInvalidUTF8, ""},
		{"NaN literal", `{"a":NaN}`, RuleSyntax, "/a"},
		{"truncated", `{"a":[1,2`, RuleSyntax, "/a/1"},
		{"trailing comma", `{"a":[1,]}`, RuleSyntax, "/a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.in))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check(%q) = %v, want *Error with rule %s", c.in, err, c.rule)
			}
			if e.Rule != c.rule {
				t.Fatalf("Check(%q) rule = %s (%v), want %s", c.in, e.Rule, e, c.rule)
			}
			if c.rule != RuleTooDeep && e.Pointer != c.pointer {
				t.Fatalf("Check(%q) pointer = %q, want %q (%v)", c.in, e.Pointer, c.pointer, e)
			}
			if e.Detail == "" || !strings.Contains(e.Error(), string(c.rule)) {
				t.Fatalf("error text %q lacks detail or rule", e.Error())
			}
		})
	}
}

func TestCheckDepthLimitIsInclusive(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if err := Check([]byte(ok)); err != nil {
		t.Fatalf("%d nested arrays refused: %v", MaxDepth, err)
	}
	deep := `{"a":` + strings.Repeat(`{"b":`, MaxDepth) + `1` + strings.Repeat("}", MaxDepth+1)
	err := Check([]byte(deep))
	var e *Error
	if !errors.As(err, &e) || e.Rule != RuleTooDeep || !strings.HasPrefix(e.Pointer, "/a/b/b") {
		t.Fatalf("deep object: %v", err)
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `0`, `-1.5e3`, `"x"`, `null`, ` {"a":[1,2,{"b":"\u00e9\ud83d\ude00"}]} `,
		`{"a":1,"A":2}`, `{"n":0.0}`, `{"n":1e-400}`, `"\u0000"`,
	} {
		if err := Check([]byte(in)); err != nil {
			t.Errorf("Check(%q) = %v, want nil", in, err)
		}
	}
}

func TestDecodeKeepsNumberText(t *testing.T) {
	v, err := Decode([]byte(`{"n":12345678901234567890,"f":1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["n"].(json.Number).String() != "12345678901234567890" || m["f"].(json.Number).String() != "1.50" {
		t.Fatalf("numbers changed: %#v", m)
	}
	if _, err := Decode([]byte(`{"a":1,"a":1}`)); err == nil {
		t.Fatal("Decode accepted a duplicate member")
	}
}

type closed struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Meta       struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func TestUnmarshalClosed(t *testing.T) {
	var c closed
	if err := Unmarshal([]byte(`{"apiVersion":"a/v1","kind":"K","metadata":{"name":"x"}}`), &c); err != nil || c.Meta.Name != "x" {
		t.Fatalf("Unmarshal: %v %+v", err, c)
	}
	cases := []struct {
		in      string
		rule    Rule
		pointer string
	}{
		{`{"apiVersion":"a/v1","extra":1}`, RuleUnknownMember, "/extra"},
		{`{"metadata":{"name":"x","uid":"u"}}`, RuleUnknownMember, "/metadata/uid"},
		{`{"APIVERSION":"a/v1"}`, RuleUnknownMember, "/APIVERSION"},
		{`{"kind":7}`, RuleWrongType, "/kind"},
		{`{"kind":"K","kind":"L"}`, RuleDuplicateName, "/kind"},
	}
	for _, k := range cases {
		var c closed
		err := Unmarshal([]byte(k.in), &c)
		var e *Error
		if !errors.As(err, &e) || e.Rule != k.rule || e.Pointer != k.pointer {
			t.Errorf("Unmarshal(%s) = %v, want rule %s at %s", k.in, err, k.rule, k.pointer)
		}
	}
}

func TestDigest(t *testing.T) {
	a, err := Digest([]byte(`{"b":2,"a":[1.0,"é"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Digest([]byte("{\n  \"a\": [1, \"\\u00e9\"],\n  \"b\": 2.0\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("equal documents digest differently: %s vs %s", a, b)
	}
	if !ValidDigest(a) {
		t.Fatalf("digest %q has the wrong grammar", a)
	}
	// RFC 8785 canonical form of a known document, hashed independently.
	c, err := Canonical([]byte(`{"b":2,"a":[1.0,"é"]}`))
	if err != nil || string(c) != `{"a":[1,"é"],"b":2}` {
		t.Fatalf("Canonical = %s, %v", c, err)
	}
	if SumDigest(c) != a {
		t.Fatal("Digest is not SHA-256 of the canonical bytes")
	}
	if _, err := Digest([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("Digest accepted a duplicate member")
	}
	d, err := DigestValue(map[string]any{"b": 2, "a": []any{1, "é"}})
	if err != nil || d != a {
		t.Fatalf("DigestValue = %s, %v; want %s", d, err, a)
	}
}

func TestDecodeObject(t *testing.T) {
	m, err := DecodeObject([]byte(`{"a":{"b":1.50}}`))
	if err != nil || m["a"].(map[string]any)["b"] != json.Number("1.50") {
		t.Fatalf("DecodeObject = %v, %v", m, err)
	}
	for _, c := range []struct {
		in   string
		rule Rule
	}{
		{`[1]`, RuleWrongType},
		{`"x"`, RuleWrongType},
		{`null`, RuleWrongType},
		{``, RuleEmpty},
		{`{"a":1,"a":2}`, RuleDuplicateName},
	} {
		m, err := DecodeObject([]byte(c.in))
		var e *Error
		if m != nil || !errors.As(err, &e) || e.Rule != c.rule {
			t.Errorf("DecodeObject(%q) = %v, %v; want rule %s", c.in, m, err, c.rule)
		}
	}
}

func TestAs(t *testing.T) {
	v, err := Decode([]byte(`{"s":"x","n":2,"o":{"k":"v"},"l":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	if got := As[string](doc["s"]); got != "x" {
		t.Errorf("string member: %q", got)
	}
	if got := As[map[string]any](doc["o"]); got["k"] != "v" {
		t.Errorf("object member: %v", got)
	}
	if got := As[[]any](doc["l"]); len(got) != 1 {
		t.Errorf("array member: %v", got)
	}
	// Absent, null and another type all read as the zero value.
	if got := As[string](doc["missing"]); got != "" {
		t.Errorf("absent member: %q", got)
	}
	if got := As[string](doc["n"]); got != "" {
		t.Errorf("number read as string: %q", got)
	}
	if got := As[map[string]any](doc["s"]); got != nil {
		t.Errorf("string read as object: %v", got)
	}
}
