package postgres

import (
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The URL rules here follow pgx's own parser (pgconn, which copies
// libpq's), not net/url's: the driver is what reads the password, so a
// message hides what the driver would send (decision
// spec/decisions/0049-postgres-url-userinfo.md).

// splitURL cuts rawURL as pgx does: the scheme (postgres:// or
// postgresql://; "" for no URL), the userinfo (up to the first '@' that
// comes before any '/'; hasUserinfo false when there is none), the
// hosts, ports and path (middle), and the query after the first '?' that
// follows outside an IPv6 host's brackets.
func splitURL(rawURL string) (scheme, userinfo string, hasUserinfo bool, middle, query string, hasQuery bool) {
	rest, found := strings.CutPrefix(rawURL, "postgresql://")
	scheme = "postgresql://"
	if !found {
		if rest, found = strings.CutPrefix(rawURL, "postgres://"); !found {
			return "", "", false, "", "", false
		}
		scheme = "postgres://"
	}
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		userinfo, hasUserinfo, rest = rest[:i], true, rest[i+1:]
	}
	// The query begins at the first '?' outside an IPv6 host's brackets.
	inBrackets := false
	for i := 0; i < len(rest); i++ {
		switch {
		case rest[i] == '[':
			inBrackets = true
		case rest[i] == ']':
			inBrackets = false
		case rest[i] == '?' && !inBrackets:
			return scheme, userinfo, hasUserinfo, rest[:i], rest[i+1:], true
		}
	}
	return scheme, userinfo, hasUserinfo, rest, "", false
}

// IsURL reports whether location is a PostgreSQL connection URL: it
// starts with postgres:// or postgresql:// (lowercase, as pgx reads it).
func IsURL(location string) bool {
	scheme, _, _, _, _, _ := splitURL(location)
	return scheme != ""
}

// QuoteIdent writes name as an SQL identifier for a repair sentence: as
// is when it needs no quoting, else double-quoted.
func QuoteIdent(name string) string {
	if name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && (name[0] < '0' || name[0] > '9') {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

// badPort reports a host list (host[:port],…, IPv6 in brackets) with a
// port that is not all digits: a password written where the host was
// forgotten (postgres://u:SECRET/db) reads as one.
func badPort(hosts string) bool {
	for _, h := range strings.Split(hosts, ",") {
		if strings.HasPrefix(h, "[") {
			_, h, _ = strings.Cut(h, "]")
		}
		if _, port, ok := strings.Cut(h, ":"); ok && strings.Trim(port, "0123456789") != "" {
			return true
		}
	}
	return false
}

// secretKey reports a query parameter name (raw, as written) that may
// hold a secret: password or sslpassword, however spaced, cased or
// percent-encoded. A name that does not decode counts as secret.
func secretKey(rawKey string) bool {
	k, err := url.PathUnescape(strings.TrimSpace(rawKey))
	if err != nil {
		return true
	}
	return strings.Contains(strings.ToLower(k), "password")
}

// urlSecrets are the secret strings rawURL carries, as written and
// decoded: the userinfo's password and each secret parameter's value.
func urlSecrets(rawURL string) []string {
	_, userinfo, _, _, query, _ := splitURL(rawURL)
	var found []string
	add := func(raw string) {
		if raw = strings.TrimSpace(raw); raw != "" {
			found = append(found, raw)
			if d, err := url.PathUnescape(raw); err == nil && d != raw {
				found = append(found, d)
			}
		}
	}
	if _, pw, ok := strings.Cut(userinfo, ":"); ok {
		add(pw)
	}
	for _, pair := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(pair, "="); ok && secretKey(k) {
			add(v)
		}
	}
	return found
}

// hiddenURL is what Redact shows of a string whose password it cannot
// locate.
const hiddenURL = "(a database URL hidden whole: it is not a postgres:// URL, or its user name, password or query is not percent-encoded)"

// Redact returns rawURL with its secrets — the userinfo's password and
// the value of every parameter named like password or sslpassword —
// replaced by "xxxxx", the parts cut as pgx cuts them. A string that is
// no postgres:// URL, or one ambiguousUserinfo refuses, is replaced
// whole, so no password reaches a log. Use it for every message that
// names the database.
func Redact(rawURL string) string {
	scheme, userinfo, hasUserinfo, middle, query, hasQuery := splitURL(rawURL)
	if hosts, _, _ := strings.Cut(middle, "/"); scheme == "" || badPort(hosts) || ambiguousUserinfo(rawURL) != "" {
		return hiddenURL
	}
	var b strings.Builder
	b.WriteString(scheme)
	if hasUserinfo {
		user, _, hasPassword := strings.Cut(userinfo, ":")
		b.WriteString(user)
		if hasPassword {
			b.WriteString(":xxxxx")
		}
		b.WriteByte('@')
	}
	b.WriteString(middle)
	if hasQuery {
		pairs := strings.Split(query, "&")
		for i, pair := range pairs {
			if k, _, ok := strings.Cut(pair, "="); ok && secretKey(k) {
				pairs[i] = k + "=xxxxx"
			}
		}
		b.WriteString("?" + strings.Join(pairs, "&"))
	}
	return b.String()
}

// ambiguousUserinfo says why the password of rawURL cannot be told from
// the rest of it, "" when it can or when rawURL is no postgres:// URL:
//   - a '?' in the userinfo (postgres://db:5432?user=u&password=p@ss has
//     no path, so the driver takes all before the '@' for the userinfo);
//   - an '@' after the userinfo and before the first '/' (a second '@' in
//     the password: the driver would take the rest for a host and look
//     it up);
//   - a '#' anywhere (a connection URL has no fragment);
//   - an '@' in the path;
//   - a query parameter without '=' or with an '@' in its name;
//   - an '@' in a query value followed by a '/' (what reads as a host and
//     a path; user=alice@corp has none, and a file path, starting with
//     '/', is left alone).
//
// Open refuses such a URL before anything connects, and Redact hides it
// whole.
func ambiguousUserinfo(rawURL string) string {
	scheme, userinfo, _, middle, query, hasQuery := splitURL(rawURL)
	if scheme == "" {
		return ""
	}
	const fix = "; percent-encode it (@ as %40, # as %23, ? as %3F, / as %2F, & as %26), or leave the password out of the URL and give it as PGPASSWORD or in ~/.pgpass"
	host, path, _ := strings.Cut(middle, "/")
	badField, hostInValue := false, false
	if hasQuery {
		for _, pair := range strings.Split(query, "&") {
			k, v, ok := strings.Cut(pair, "=")
			badField = badField || strings.Contains(k, "@") || (!ok && pair != "")
			if _, after, at := strings.Cut(v, "@"); at && !strings.HasPrefix(v, "/") { // a file path may hold an '@'
				_, _, slash := strings.Cut(after, "/")
				hostInValue = hostInValue || slash
			}
		}
	}
	switch {
	case strings.Contains(userinfo, "?"):
		return "the URL's user name or password holds an unencoded '?' (with no path after the host it would read as the query)" + fix
	case strings.Contains(host, "@"):
		return "the URL's user name or password holds an unencoded '@'" + fix
	case strings.Contains(rawURL, "#"):
		return "the URL holds an unencoded '#' (a connection URL has no fragment: in a password, a setting or a name it is %23)" + fix
	case strings.Contains(path, "@"):
		return "the URL's path holds an unencoded '@', which could end a password (in a database name too, write it as %40)" + fix
	case badField:
		return "the URL's query holds a parameter without '=' or with an '@' in its name: an unencoded '?' or '&' in a password or a value began it" + fix
	case hostInValue:
		return "the URL's query holds an '@' followed by what reads as a host and a path: an unencoded '?' or '/' in a password began the query" + fix
	}
	return ""
}
