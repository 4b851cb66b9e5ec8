package edge

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// hostnameSchemaPattern is WorkerCustomDomain desiredSchema
// /properties/hostname/pattern.
var hostnameSchemaPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+\.?$`)

func TestCanonicalHostnameValid(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	max253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".")
	tests := []struct{ in, want string }{
		{"Example.COM.", "example.com"},
		{"example.com", "example.com"},
		{"app.portable-conformance.invalid", "app.portable-conformance.invalid"}, // reference fixture
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"XN--BCHER-KVA.Example.", "xn--bcher-kva.example"},
		{"www.xn--mnchen-3ya.de", "www.xn--mnchen-3ya.de"},
		{"xn--eckwd4c7cu47r2wf.jp", "xn--eckwd4c7cu47r2wf.jp"},
		{"a.b", "a.b"},
		{"1.example", "1.example"},
		{"a-b--c.example", "a-b--c.example"},
		{"ab--cd.example", "ab--cd.example"}, // reserved-LDH but not xn--: accepted
		{label63 + ".com", label63 + ".com"},
		{max253, max253},
		{max253 + ".", max253}, // 254 bytes with the root dot: canonical is 253
	}
	for _, tc := range tests {
		got, err := CanonicalHostname(tc.in)
		if err != nil {
			t.Errorf("CanonicalHostname(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("CanonicalHostname(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !hostnameSchemaPattern.MatchString(got) || len(got) > HostnameMaxLength {
			t.Errorf("canonical %q is not schema-valid", got)
		}
		if again, err := CanonicalHostname(got); err != nil || again != got {
			t.Errorf("not idempotent: %q → %q, %v", got, again, err)
		}
	}
}

func TestCanonicalHostnameInvalid(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	tests := []struct{ in, rule string }{
		{"", RuleHostnameEmpty},
		{".", RuleHostnameEmpty},
		{"example.com..", RuleHostnameLabelEmpty},
		{".example.com", RuleHostnameLabelEmpty},
		{"example..com", RuleHostnameLabelEmpty},
		{"bücher.example", RuleHostnameULabel},
		{"BÜCHER.example", RuleHostnameULabel},
		{"例え.jp", RuleHostnameULabel},
		{"example.com\xff", RuleHostnameULabel},
		{"-app.example.com", RuleHostnameLabelHyphen},
		{"app-.example.com", RuleHostnameLabelHyphen},
		{"app.example.com-", RuleHostnameLabelHyphen},
		{"xn--.example", RuleHostnameLabelHyphen},
		{strings.Repeat("a", 64) + ".com", RuleHostnameLabelLength},
		{"app." + strings.Repeat("a", 64), RuleHostnameLabelLength},
		{strings.Join([]string{label63, label63, label63, strings.Repeat("b", 62)}, "."), RuleHostnameTooLong},
		{"not a hostname", RuleHostnameCharacter}, // reference negative fixture
		{" example.com", RuleHostnameCharacter},
		{"example.com ", RuleHostnameCharacter},
		{"example.com\t", RuleHostnameCharacter},
		{"exa_mple.com", RuleHostnameCharacter},
		{"*.example.com", RuleHostnameCharacter},
		{"example.com:443", RuleHostnameCharacter},
		{"localhost", RuleHostnameSingleLabel},
		{"localhost.", RuleHostnameSingleLabel},
		{"192.0.2.1", RuleHostnameNumericTLD},
		{"example.123", RuleHostnameNumericTLD},
		{"xn--aaa0.example", RuleHostnameALabel},        // Punycode runs out mid-number
		{"xn--abc-.example", RuleHostnameLabelHyphen},   // hyphen rule comes first
		{"xn--9999999999a.example", RuleHostnameALabel}, // overflows
		{"xn--bcher-kv.example", RuleHostnameALabel},    // truncated digit sequence
		// IDNA2008 registration (idna.Registration) refuses these well-formed
		// Punycode labels (spec/decisions/0026-libraries-under-our-rules.md):
		{"xn--wca.example", RuleHostnameALabel},        // "Ü": a mapped (upper-case) code point
		{"xn--bucher-xyd.example", RuleHostnameALabel}, // "bu\u0308cher": not NFC
		{"xn--ab-1ca.example", RuleHostnameALabel},     // "a\u00a0b": a disallowed code point
		{"xn--ab-m1t.example", RuleHostnameALabel},     // "a\u200db": ZWJ outside its CONTEXTJ rule
		{"xn--a-0hc.example", RuleHostnameALabel},      // "a\u05d0": breaks the Bidi rule
		{"xn----eha.example", RuleHostnameALabel},      // "-ü": the U-label starts with a hyphen
		{"xn--ab---3ra.example", RuleHostnameALabel},   // "ab--ü": hyphens in positions 3-4
		{"xn--tda54h.example", RuleHostnameALabel},     // "\u0300ü": starts with a combining mark
	}
	for _, tc := range tests {
		got, err := CanonicalHostname(tc.in)
		if got != "" {
			t.Errorf("CanonicalHostname(%q) returned %q with error %v", tc.in, got, err)
		}
		t.Run(tc.in, func(t *testing.T) { wantRuleError(t, err, tc.rule, "/hostname") })
	}
	re := wantRuleError(t, func() error { _, err := CanonicalHostname("bücher.example"); return err }(), RuleHostnameULabel, "/hostname")
	if !strings.Contains(re.Message, `"xn--bcher-kva"`) || !strings.Contains(re.Message, "bücher") {
		t.Errorf("u-label message should name the label and the A-label form: %s", re.Message)
	}
}

// Everything CanonicalHostname accepts is schema-valid, already canonical, and
// the canonical form of every ASCII case/trailing-dot spelling.
func TestCanonicalHostnameAcceptsOnlySchemaValid(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	atoms := []string{"a", "Z", "0", "9", "-", "--", ".", "xn--", "bcher-kva", " ", "_", strings.Repeat("q", 60)}
	accepted := 0
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for n := 1 + r.Intn(10); n > 0; n-- {
			b.WriteString(atoms[r.Intn(len(atoms))])
		}
		in := b.String()
		got, err := CanonicalHostname(in)
		if err != nil {
			continue
		}
		accepted++
		if !hostnameSchemaPattern.MatchString(got) || len(got) > HostnameMaxLength || got != strings.ToLower(got) || strings.HasSuffix(got, ".") {
			t.Fatalf("CanonicalHostname(%q) = %q is not canonical and schema-valid", in, got)
		}
		if len(in) <= HostnameMaxLength && !hostnameSchemaPattern.MatchString(in) {
			t.Fatalf("CanonicalHostname accepted %q which the schema refuses", in)
		}
	}
	if accepted < 200 {
		t.Fatalf("generator produced only %d accepted hostnames", accepted)
	}
}

// Every A-label CanonicalHostname accepts decodes to a non-ASCII U-label
// that encodes back to exactly that label (RFC 5891 §5.4): the library's
// registration check never accepts what the Punycode round trip refuses.
func TestAcceptedALabelsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(16))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	accepted := 0
	for i := 0; i < 200000; i++ {
		b := make([]byte, 1+r.Intn(12))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		label := "xn--" + string(b)
		if _, err := CanonicalHostname(label + ".example"); err != nil {
			continue
		}
		accepted++
		u, err := idna.Punycode.ToUnicode(label)
		if err != nil || strings.IndexFunc(u, func(c rune) bool { return c >= 0x80 }) < 0 {
			t.Fatalf("accepted %q decodes to %q, %v: not a non-ASCII U-label", label, u, err)
		}
		if again, err := idna.Punycode.ToASCII(u); err != nil || again != label {
			t.Fatalf("accepted %q is not the canonical encoding of %q (%q, %v)", label, u, again, err)
		}
	}
	if accepted < 1000 {
		t.Fatalf("generator produced only %d accepted A-labels", accepted)
	}
}
