package postgres

import (
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// secretParams are the query parameters of a connection URL that hold a
// secret (libpq's password and sslpassword), which no message shows.
var secretParams = [...]string{"password", "sslpassword"}

// secrets are the secret values u carries: the userinfo's password and
// each secretParams value, those that are not empty. complete is false
// when u's query does not parse strictly (net/url drops such pairs, which
// pgx may still read), so a secret may be missing from the list.
func secrets(u *url.URL) (found []string, complete bool) {
	if pw, _ := u.User.Password(); pw != "" {
		found = append(found, pw)
	}
	q, err := url.ParseQuery(u.RawQuery)
	for _, p := range secretParams {
		if v := q.Get(p); v != "" {
			found = append(found, v)
		}
	}
	return found, err == nil
}

// hiddenURL is what Redact shows of a URL whose password it cannot
// locate.
const hiddenURL = "(a database URL hidden whole: it does not parse, or its user name, password or query is not percent-encoded)"

// Redact returns rawURL with its secrets (the userinfo's password and
// each secretParams parameter) replaced by "xxxxx". A URL that does not
// parse, whose query does not parse strictly, or whose password cannot be
// told from the rest (ambiguousUserinfo) is replaced whole, so no
// password reaches a log. Use it for every message that names the
// database.
func Redact(rawURL string) string {
	if ambiguousUserinfo(rawURL) != "" {
		return hiddenURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return hiddenURL
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return hiddenURL
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	changed := false
	for _, p := range secretParams {
		if q.Has(p) {
			q.Set(p, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// ambiguousUserinfo says why rawURL's user name or password cannot be
// told from the rest of it, "" when it can (decision
// spec/decisions/0049-postgres-url-userinfo.md): a second '@' in the
// authority; a '#' anywhere (a connection URL has no fragment); an '@' in
// the path or in a query parameter's name, or a parameter without '='
// (the path or query would begin inside a password); a host that net/url
// and pgx read differently (a '?' or '/' ended the userinfo for one of
// them). Open refuses such a URL before anything connects, and Redact
// hides it whole.
func ambiguousUserinfo(rawURL string) string {
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return ""
	}
	const fix = "; percent-encode it (@ as %40, # as %23, ? as %3F, / as %2F, & as %26), or leave the password out of the URL and give it as PGPASSWORD or in ~/.pgpass"
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	path, query, hasQuery := strings.Cut(tail, "?")
	badField := false // a parameter's name never holds an '@' (its value may: user=alice@corp), and every parameter has an '='
	if hasQuery && query != "" {
		for _, f := range strings.Split(query, "&") {
			key, _, hasValue := strings.Cut(f, "=")
			badField = badField || strings.Contains(key, "@") || (!hasValue && f != "")
		}
	}
	switch {
	case strings.Count(authority, "@") > 1:
		return "the URL's user name or password holds an unencoded '@'" + fix
	case strings.Contains(rest, "#"):
		return "the URL holds an unencoded '#' (a connection URL has no fragment: in a password, a setting or a name it is %23)" + fix
	case strings.Contains(path, "@"):
		return "the URL's path holds an unencoded '@', which could end a password (in a database name too, write it as %40)" + fix
	case badField:
		return "the URL's query holds a parameter without '=' or with an '@' in its name: an unencoded '?' or '&' in a password or a value began it" + fix
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || u.Query().Has("host") {
		return "" // Redact hides an unparsable URL whole; a host= names sockets
	}
	cfg, err := pgconn.ParseConfig(rawURL)
	if err != nil {
		return "" // parseProblem says why, without the password
	}
	if firstHost(u.Host) != cfg.Host {
		return "the URL's user name or password holds an unencoded '?' or '/' (net/url and the driver read different hosts from it)" + fix
	}
	return ""
}

// firstHost is the host name of the first host:port of a URL's host
// part (a comma-separated list; an IPv6 address in brackets).
func firstHost(hosts string) string {
	h, _, _ := strings.Cut(hosts, ",")
	if strings.HasPrefix(h, "[") {
		if i := strings.Index(h, "]"); i > 0 {
			return h[1:i]
		}
	}
	h, _, _ = strings.Cut(h, ":")
	return h
}
