package storeurl

import (
	"regexp"
	"strings"

	"github.com/takoform/takoform/host/store/postgres"
)

// mistypedURL reports whether data is a PostgreSQL URL missing its "://"
// ("postgres//u:p@h/db", "postgres:u:p@h/db", "postgresql:/…") and returns
// the URL it most likely meant, with the password redacted. A plain path
// such as postgres/host.db (one slash, a directory) is not one.
func mistypedURL(data string) (string, bool) {
	lower := strings.ToLower(data)
	for _, scheme := range []string{"postgresql", "postgres"} {
		if !strings.HasPrefix(lower, scheme) {
			continue
		}
		rest := data[len(scheme):]
		if !strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, "//") {
			return "", false
		}
		return postgres.Redact("postgres://" + strings.TrimLeft(rest, ":/")), true
	}
	return "", false
}

// kvKeyword matches a libpq connection keyword at the start of a
// keyword/value pair ("host=…", "password = …"); the keywords are libpq's
// most used (PostgreSQL documentation, libpq "Connection Strings"). Parse
// refuses such a string without showing its password
// (spec/decisions/0011-postgres-concurrency.md, point 13).
var kvKeyword = regexp.MustCompile(`(?i)(?:^|\s)(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|connect_timeout|application_name)\s*=`)

// kvPassword matches a password's value in a keyword/value string, quoted
// ('…' with \' escapes) or bare.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

// keywordValue reports whether data is a libpq keyword/value connection
// string (host=… dbname=…) rather than a file path.
func keywordValue(data string) bool {
	return strings.Contains(data, "=") && kvKeyword.MatchString(data)
}

// redactKeywordValue returns a keyword/value string with its password's
// value replaced by xxxxx.
func redactKeywordValue(data string) string {
	return kvPassword.ReplaceAllString(data, "${1}xxxxx")
}
