package edge

import (
	"fmt"
	"strings"

	"golang.org/x/net/idna"
)

// Hostname rule IDs (spec/host-api-v1alpha3.md §5.6, §6.5). Every hostname refusal points at "/hostname".
const (
	RuleHostnameEmpty       = "edge.hostname.empty"
	RuleHostnameULabel      = "edge.hostname.u-label"
	RuleHostnameCharacter   = "edge.hostname.character"
	RuleHostnameTooLong     = "edge.hostname.too-long"
	RuleHostnameLabelEmpty  = "edge.hostname.label-empty"
	RuleHostnameLabelLength = "edge.hostname.label-length"
	RuleHostnameLabelHyphen = "edge.hostname.label-hyphen"
	RuleHostnameALabel      = "edge.hostname.a-label"
	RuleHostnameSingleLabel = "edge.hostname.single-label"
	RuleHostnameNumericTLD  = "edge.hostname.numeric-tld"
)

// HostnameMaxLength is the maxLength of WorkerCustomDomain's desired
// "hostname"; CanonicalHostname applies it to the canonical form.
const HostnameMaxLength = 253

// HostnameMaxLabelLength is the longest DNS label, in bytes.
const HostnameMaxLabelLength = 63

const hostnamePointer = "/hostname"

// CanonicalHostname canonicalizes and validates a WorkerCustomDomain
// "hostname" (spec/host-api-v1alpha3.md §5.6, §6.5) and returns the canonical form the host compares,
// digests and stores, or a *RuleError (pointer "/hostname").
//
// Canonicalization: strip exactly one trailing "." and lowercase ASCII A-Z.
// No Unicode case folding, no IDNA mapping, no trimming of whitespace.
//
// Validation of the canonical form (the reference schema pattern, plus the
// A-label and TLD rules below); every accepted result matches that pattern:
//   - no byte >= 0x80: an internationalized label must be written as its
//     A-label (edge.hostname.u-label);
//   - only a-z, 0-9, "-" and "." (edge.hostname.character);
//   - at most 253 bytes (edge.hostname.too-long);
//   - at least two labels (edge.hostname.single-label), none empty
//     (edge.hostname.label-empty), each at most 63 bytes
//     (edge.hostname.label-length), none starting or ending with "-"
//     (edge.hostname.label-hyphen);
//   - a label starting "xn--" must be an A-label that golang.org/x/net/idna's
//     Registration profile accepts (RFC 5891 §4 with the UTS #46 tables):
//     Punycode that decodes to a non-ASCII U-label in NFC, with no
//     disallowed or mapped code point, no hyphen at its ends or in positions
//     3-4, and the CONTEXTJ and (per label) Bidi rules met
//     (edge.hostname.a-label; spec/decisions/0026-libraries-under-our-rules.md).
//     Other labels with "--" in positions 3-4 are accepted (the lane's LDH
//     pattern allows them);
//   - the last label is not all digits, so an IPv4 literal is never a
//     hostname (edge.hostname.numeric-tld).
func CanonicalHostname(h string) (string, error) {
	if h == "" {
		return "", newRuleError(RuleHostnameEmpty, hostnamePointer,
			`hostname is empty; write a DNS name such as "app.example.com"`)
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			label := hostLabelAt(h, i)
			hint := "its A-label (xn--…) form"
			if a, err := idna.Lookup.ToASCII(label); err == nil {
				hint = fmt.Sprintf("its A-label %q", a)
			}
			return "", newRuleError(RuleHostnameULabel, hostnamePointer, fmt.Sprintf(
				"hostname %q contains the non-ASCII label %q; internationalized names are accepted only as A-labels (no IDNA mapping is applied): write %s",
				h, label, hint))
		}
	}
	c := strings.TrimSuffix(h, ".")
	c = hostASCIILower(c)
	if c == "" {
		return "", newRuleError(RuleHostnameEmpty, hostnamePointer,
			`hostname "." names the DNS root; write a DNS name such as "app.example.com"`)
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
			return "", newRuleError(RuleHostnameCharacter, hostnamePointer, fmt.Sprintf(
				"hostname %q contains %q at byte %d; use only letters, digits, hyphens and dots, with no whitespace", h, b, i))
		}
	}
	if len(c) > HostnameMaxLength {
		return "", newRuleError(RuleHostnameTooLong, hostnamePointer, fmt.Sprintf(
			"hostname is %d bytes without its trailing dot, longer than the %d a DNS name allows; use a shorter name", len(c), HostnameMaxLength))
	}
	labels := strings.Split(c, ".")
	for i, l := range labels {
		switch {
		case l == "":
			return "", newRuleError(RuleHostnameLabelEmpty, hostnamePointer, fmt.Sprintf(
				"hostname %q has an empty label (leading dot, two dots in a row, or more than one trailing dot); remove the extra dot", h))
		case len(l) > HostnameMaxLabelLength:
			return "", newRuleError(RuleHostnameLabelLength, hostnamePointer, fmt.Sprintf(
				"label %d of hostname %q is %d bytes; a DNS label is at most %d", i+1, h, len(l), HostnameMaxLabelLength))
		case l[0] == '-' || l[len(l)-1] == '-':
			return "", newRuleError(RuleHostnameLabelHyphen, hostnamePointer, fmt.Sprintf(
				"label %q of hostname %q starts or ends with a hyphen; a label must begin and end with a letter or digit", l, h))
		case strings.HasPrefix(l, "xn--"):
			if _, err := idna.Registration.ToUnicode(l); err != nil {
				return "", newRuleError(RuleHostnameALabel, hostnamePointer, fmt.Sprintf(
					"label %q of hostname %q is not a valid A-label (%v); write the A-label exactly as IDNA2008 registration encodes the name", l, h, err))
			}
		}
	}
	if len(labels) < 2 {
		return "", newRuleError(RuleHostnameSingleLabel, hostnamePointer, fmt.Sprintf(
			"hostname %q is a single label; write a fully qualified name with at least two labels, such as \"app.example.com\"", h))
	}
	if tld := labels[len(labels)-1]; hostAllDigits(tld) {
		return "", newRuleError(RuleHostnameNumericTLD, hostnamePointer, fmt.Sprintf(
			"hostname %q ends in the all-numeric label %q, so it is an address rather than a DNS name; write a DNS hostname", h, tld))
	}
	return c, nil
}

// labelAt returns the dot-separated label of s containing byte i.
func hostLabelAt(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '.') + 1
	end := strings.IndexByte(s[i:], '.')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

func hostASCIILower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func hostAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
