package form

import "strings"

// The grammars of the identity members (spec/host-api-v1alpha3.md §1.2,
// §1.3), matched by hand: they run on every request of the host and the
// client, where a regexp was a visible cost. Each is the one rule for its
// member; grammar_test.go proves it agrees with the regular expression
// the spec writes (decision spec/decisions/0036-hand-written-grammars.md).

// matchAPIVersion is
// ^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+/v[0-9]+(?:(?:alpha|beta)[0-9]+)?$
// : a group of two or more DNS labels, '/', and a version.
func matchAPIVersion(s string) bool {
	group, version, ok := strings.Cut(s, "/")
	if !ok || !strings.Contains(group, ".") {
		return false
	}
	for label := range strings.SplitSeq(group, ".") {
		if !matchLabel(label) {
			return false
		}
	}
	rest, ok := strings.CutPrefix(version, "v")
	if !ok {
		return false
	}
	rest, ok = cutDigits(rest)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	if r, ok := strings.CutPrefix(rest, "alpha"); ok {
		rest = r
	} else if rest, ok = strings.CutPrefix(rest, "beta"); !ok {
		return false
	}
	rest, ok = cutDigits(rest)
	return ok && rest == ""
}

// matchLabel is one DNS label [a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?.
func matchLabel(s string) bool {
	return len(s) > 0 && len(s) <= 63 && s[0] != '-' && s[len(s)-1] != '-' && every(s, isNameByte)
}

// matchKind is ^[A-Z][A-Za-z0-9]{0,63}$.
func matchKind(s string) bool {
	return len(s) > 0 && len(s) <= 64 && isUpper(s[0]) && every(s[1:], isAlnum)
}

// matchResourceName is ^[a-z][a-z0-9-]{0,62}$.
func matchResourceName(s string) bool {
	return len(s) > 0 && len(s) <= 63 && isLower(s[0]) && every(s[1:], isNameByte)
}

// matchSemver is SemVer 2.0.0's own expression:
// ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-((0|[1-9][0-9]*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*))*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$
func matchSemver(s string) bool {
	rest, ok := cutCore(s)
	if !ok {
		return false
	}
	if r, ok := strings.CutPrefix(rest, "-"); ok {
		pre, build, hasBuild := strings.Cut(r, "+")
		return identifiers(pre, true) && (!hasBuild || identifiers(build, false))
	}
	if build, ok := strings.CutPrefix(rest, "+"); ok {
		return identifiers(build, false)
	}
	return rest == ""
}

// matchStrictVersion is ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$.
func matchStrictVersion(s string) bool {
	rest, ok := cutCore(s)
	return ok && rest == ""
}

// cutCore cuts MAJOR.MINOR.PATCH, (0|[1-9][0-9]*) each, off s.
func cutCore(s string) (string, bool) {
	for i := range 3 {
		if i > 0 {
			r, ok := strings.CutPrefix(s, ".")
			if !ok {
				return "", false
			}
			s = r
		}
		r, ok := cutDigits(s)
		if !ok || (len(s)-len(r) > 1 && s[0] == '0') {
			return "", false
		}
		s = r
	}
	return s, true
}

// identifiers reports whether s is dot-separated non-empty [0-9A-Za-z-]+
// identifiers; numeric ones (all digits) have no leading zero when
// numeric is set (pre-release, not build metadata).
func identifiers(s string, numeric bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false
		}
		if !every(id, func(c byte) bool { return isAlnum(c) || c == '-' }) {
			return false
		}
		if numeric && len(id) > 1 && id[0] == '0' && every(id, isDigit) {
			return false
		}
	}
	return true
}

// cutDigits cuts one or more leading ASCII digits off s.
func cutDigits(s string) (string, bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[i:], i > 0
}

// every reports whether every byte of s satisfies ok.
func every(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool    { return isDigit(c) || isLower(c) || isUpper(c) }
func isNameByte(c byte) bool { return isDigit(c) || isLower(c) || c == '-' }
func isLower(c byte) bool    { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool    { return 'A' <= c && c <= 'Z' }
