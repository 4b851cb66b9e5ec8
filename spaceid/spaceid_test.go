package spaceid

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

type vcase struct {
	name  string
	in    string
	rule  Rule // "" means valid
	index int  // code-point offset for invalid cases
	cp    rune // offending code point, or -1
}

func validCases() []vcase {
	return []vcase{
		{name: "Prod", in: "Prod"},
		{name: "prod", in: "prod"},
		{name: "Prod North", in: "Prod North"},
		{name: "single char", in: "x"},
		{name: "interior NBSP", in: "a\u00A0b"},
		{name: "interior ideographic space", in: "a\u3000b"},
		{name: "interior ZWSP", in: "a\u200Bb"},
		{name: "leading ZWSP (not White_Space)", in: "\u200Bab"},
		{name: "interior FEFF", in: "a\uFEFFb"},
		{name: "interior line separator", in: "a\u2028b"},
		{name: "NFC e-acute", in: "caf\u00E9"},
		{name: "NFD e + combining acute", in: "cafe\u0301"},
		{name: "255 x é", in: strings.Repeat("é", 255)},
		{name: "255 x 日", in: strings.Repeat("日", 255)},
		{name: "255 x astral", in: strings.Repeat("\U0001F600", 255)},
		{name: "U+00A1 edge", in: "\u00A1x\u00A1"},
		{name: "U+FFFD literal", in: "\uFFFD"},
		{name: "dots and colons", in: "team:a.b-c_d"},
	}
}

func invalidCases() []vcase {
	var cs []vcase
	add := func(name, in string, rule Rule, index int, cp rune) {
		cs = append(cs, vcase{name: name, in: in, rule: rule, index: index, cp: cp})
	}
	add("empty", "", RuleEmpty, 0, -1)
	for _, r := range []rune{0x20, 0xA0, 0x3000, 0xFEFF, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F} {
		s := string(r)
		add("leading "+hex(r), s+"Prod", RuleEdgeCodePoint, 0, r)
		add("trailing "+hex(r), "Prod"+s, RuleEdgeCodePoint, 4, r)
		add("alone "+hex(r), s, RuleEdgeCodePoint, 0, r)
	}
	for _, r := range []rune{0x00, 0x09, 0x0A, 0x0D, 0x1F, '/', 0x7F, 0x85, 0x9F} {
		s := string(r)
		add("start "+hex(r), s+"Prod", RuleForbiddenCodePoint, 0, r)
		add("middle "+hex(r), "Pr"+s+"od", RuleForbiddenCodePoint, 2, r)
		add("end "+hex(r), "Prod"+s, RuleForbiddenCodePoint, 4, r)
	}
	add("import form", "prod/web", RuleForbiddenCodePoint, 4, '/')
	add("256 x é", strings.Repeat("é", 256), RuleTooLong, 255, -1)
	add("256 x 日", strings.Repeat("日", 256), RuleTooLong, 255, -1)
	add("256 ASCII", strings.Repeat("a", 256), RuleTooLong, 255, -1)
	add("earliest wins: / before edge", "a/ ", RuleForbiddenCodePoint, 1, '/')
	add("earliest wins: edge before /", " a/", RuleEdgeCodePoint, 0, ' ')
	add("too long before late /", strings.Repeat("a", 300)+"/", RuleTooLong, 255, -1)
	return cs
}

func hex(r rune) string { return fmt.Sprintf("%U", r) }

func TestValidate(t *testing.T) {
	for _, c := range validCases() {
		t.Run(c.name, func(t *testing.T) {
			before := []byte(c.in)
			if err := Validate(c.in); err != nil {
				t.Fatalf("Validate(%q) = %v, want nil", c.in, err)
			}
			if !Valid(c.in) {
				t.Fatalf("Valid(%q) = false", c.in)
			}
			if string(before) != c.in {
				t.Fatalf("input changed")
			}
		})
	}
	for _, c := range invalidCases() {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.in)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate(%q) = %v, want *Error", c.in, err)
			}
			if e.Rule != c.rule || e.Index != c.index || e.CodePoint != c.cp || e.Value != c.in {
				t.Fatalf("Validate(%q) = {rule %s, index %d, cp %U}, want {rule %s, index %d, cp %U}",
					c.in, e.Rule, e.Index, e.CodePoint, c.rule, c.index, c.cp)
			}
			if Valid(c.in) {
				t.Fatalf("Valid(%q) = true", c.in)
			}
			msg := e.Error()
			if c.cp >= 0 && !strings.Contains(msg, hex(c.cp)) {
				t.Errorf("message %q does not name %U", msg, c.cp)
			}
			if !strings.Contains(msg, "remove it") && !strings.Contains(msg, "shorten it") && c.rule != RuleEmpty {
				t.Errorf("message %q does not say how to fix it", msg)
			}
		})
	}
}

func TestDistinctExactValues(t *testing.T) {
	vals := []string{"Prod", "prod", "Prod North", "caf\u00E9", "cafe\u0301"}
	seen := map[string]bool{}
	for _, v := range vals {
		if !Valid(v) {
			t.Fatalf("%q invalid", v)
		}
		if seen[v] {
			t.Fatalf("%q duplicated", v)
		}
		seen[v] = true
	}
	if len(seen) != len(vals) {
		t.Fatal("values collapsed")
	}
}

func TestInvalidUTF8(t *testing.T) {
	cases := []struct {
		in          string
		index, byte int
	}{
		{"\xff", 0, 0},
		{"ab\xff", 2, 2},
		{"é\xe6\x97", 1, 2},          // truncated 日
		{"\xed\xa0\x80", 0, 0},       // encoded surrogate U+D800
		{"x\xc0\xaf", 1, 1},          // overlong '/'
		{"日日\xf4\x90\x80\x80", 2, 6}, // above U+10FFFF
	}
	for _, c := range cases {
		err := Validate(c.in)
		var e *Error
		if !errors.As(err, &e) || e.Rule != RuleInvalidUTF8 || e.Index != c.index || e.ByteOffset != c.byte {
			t.Errorf("Validate(%q) = %#v, want invalid-utf8 at code point %d byte %d", c.in, err, c.index, c.byte)
		}
	}
}

func TestMessage(t *testing.T) {
	got := Validate("Prod\t").Error()
	want := `space "Prod\t": code point 4 is U+0009 (a control character), which is not allowed anywhere in a SpaceID; remove it`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = Validate("Prod\u3000").Error()
	want = `space "Prod\u3000": code point 4 is U+3000 (an ideographic space), which is not allowed as the last code point of a SpaceID; remove it (SpaceIDs are never trimmed)`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Validate(strings.Repeat("a", 1000)).Error(); len(got) > 200 {
		t.Errorf("message for long value not cut: %d bytes", len(got))
	}
}

// The edge set is exactly Unicode White_Space plus U+FEFF.
func TestEdgeSetIsWhiteSpacePlusBOM(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.White_Space, r) || r == 0xFEFF
		if _, got := sets[edge].lookup(r); got != want {
			t.Errorf("edge set has %U = %v, want %v", r, got, want)
		}
	}
}

// The anywhere set is exactly C0, '/', DEL and C1.
func TestAnywhereSet(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r <= 0x1F || r == '/' || (r >= 0x7F && r <= 0x9F)
		if _, got := sets[anywhere].lookup(r); got != want {
			t.Errorf("anywhere set has %U = %v, want %v", r, got, want)
		}
	}
}
