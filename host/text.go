package host

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/takoform/takoform/wire"
)

// The text rule: every text input a route reads — the headers of
// textHeaders, path segments, query keys and values — is UTF-8 without
// U+0000 (NUL), or the request is refused before any store sees it
// (spec/decisions/0010-operator-surface.md). Both stores then answer
// alike: PostgreSQL's text holds neither other bytes nor NUL, and SQLite
// would keep them. Request bodies are I-JSON, which ijson checks (UTF-8,
// no lone surrogate); the one free-form JSON string stored as its own
// column, an import's nativeId, is refused with NUL by its route.

// textHeaders are the request headers a route reads besides
// Authorization (a credential is only hashed: one that is not UTF-8 names
// nobody and is answered unauthenticated).
var textHeaders = [...]string{"Content-Type", wire.HeaderIdempotency, "If-Match", "If-None-Match", wire.HeaderGeneration, wire.HeaderProbe}

// hostCodeText is the hostCode of a refusal by the text rule.
const hostCodeText = "invalid_text"

// textFault says what keeps s from being text a store keeps alike: ""
// when s is UTF-8 without NUL.
func textFault(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return textFaultSlow(s)
		}
	}
	return ""
}

func textFaultSlow(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "bytes that are not UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "a NUL (U+0000)"
	}
	return ""
}

// quoteBounded quotes s for a message, at most 64 bytes of it.
func quoteBounded(s string) string {
	const most = 64
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:most]) + "…"
}

// wildcards lists the wildcard names of a route pattern, in path order.
func wildcards(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' && seg != "{$}" {
			out = append(out, strings.TrimSuffix(seg[1:len(seg)-1], "..."))
		}
	}
	return out
}

// absentCodes are the codes a route answers for an identifier in its
// path that names nothing, by the path word before it; any other route
// answers resource_not_found (spec/host-api-v1alpha3.md §2.4, §3.6, §12.8).
var absentCodes = [...]struct {
	word string
	code wire.Code
}{
	{"/form-definitions/", wire.FormUnknown},
	{"/support/forms/", wire.FormUnknown},
	{"/operations/", wire.OperationNotFound},
	{"/artifacts/", wire.ArtifactMissing},
}

// checkText applies the text rule to a request the route pattern (with
// the wildcard names wild) matched: a header or query value that breaks
// it is invalid_argument; a path segment names nothing, so it answers
// the route's code for an absent identifier.
func checkText(r *http.Request, pattern string, wild []string) error {
	for _, name := range textHeaders {
		for _, v := range r.Header[name] {
			if f := textFault(v); f != "" {
				return wire.Errorf(wire.InvalidArgument, "the %s header holds %s; send it as UTF-8 text", name, f).
					WithHostCode(hostCodeText).WithDetail("header", name)
			}
		}
	}
	for _, name := range wild {
		v := r.PathValue(name)
		if f := textFault(v); f != "" {
			code := wire.ResourceNotFound
			for _, a := range absentCodes {
				if strings.Contains(pattern, a.word) {
					code = a.code
					break
				}
			}
			return wire.Errorf(code, "path segment %s %s holds %s, so it names nothing here; percent-encode only UTF-8 text without NUL in a path", name, quoteBounded(v), f).
				WithHostCode(hostCodeText).WithDetail("segment", name)
		}
	}
	return checkQueryText(r.URL.RawQuery)
}

// asciiQuery reports whether a raw query decodes to ASCII without NUL
// whatever its pairs are: no raw byte and no %XX escape at or above 0x80,
// and no %00. The common query (exact queries escape ':' and ' ') is
// judged so without decoding a value.
func asciiQuery(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= utf8.RuneSelf {
			return false
		}
		if c == '%' && i+2 < len(raw) {
			if hi, lo := unhex(raw[i+1]), unhex(raw[i+2]); hi >= 8 || hi == 0 && lo == 0 {
				return false
			}
		}
	}
	return true
}

// checkQueryText applies the text rule to every key and value of a raw
// query string. A pair that is not valid URL encoding is left to the
// route, which refuses it where it reads the query (query_encoding).
func checkQueryText(raw string) error {
	if asciiQuery(raw) {
		return nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		if f := textFault(key); f != "" {
			return wire.Errorf(wire.InvalidArgument, "query key %s holds %s; percent-encode only UTF-8 text without NUL", quoteBounded(key), f).
				WithHostCode(hostCodeText).WithDetail("query", quoteBounded(key))
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		if f := textFault(val); f != "" {
			return wire.Errorf(wire.InvalidArgument, "query value %s= holds %s (%s); percent-encode only UTF-8 text without NUL", key, f, quoteBounded(val)).
				WithHostCode(hostCodeText).WithDetail("query", key)
		}
	}
	return nil
}
