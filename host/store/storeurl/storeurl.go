// Package storeurl opens the store a data location names — the value of
// `takoform host serve --data` and TAKOFORM_DATA:
//
//	postgres://USER:PASSWORD@HOST:PORT/DATABASE?…   PostgreSQL (also postgresql://)
//	sqlite:///path/to/host.db                      the embedded SQLite file
//	/path/to/host.db, host.db                      the same (a plain path)
//
// A location is printed only through Redact, so a password never reaches a
// log (spec/decisions/0011-postgres-concurrency.md).
package storeurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/sqlite"
)

// Kind is the store a data location names.
type Kind string

const (
	SQLite   Kind = "sqlite"
	Postgres Kind = "postgres"
)

// Parse returns the kind of store data names and, for SQLite, the file
// path. A location with another scheme (xyz://…) is an error naming the
// supported forms, as is one that means PostgreSQL but is no URL: a
// postgres URL missing its "://" (postgres//u:p@h/db) or a libpq
// keyword/value string (host=h password=p dbname=d). Errors never show a
// password (Redact).
func Parse(data string) (Kind, string, error) {
	switch {
	case data == "":
		return "", "", fmt.Errorf("the data location is empty; give a SQLite file path, sqlite:///PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE")
	case postgres.IsURL(data):
		return Postgres, "", nil
	case strings.HasPrefix(data, "sqlite://"):
		path := strings.TrimPrefix(data, "sqlite://")
		if path == "" {
			return "", "", fmt.Errorf("the data location %q names no file; write sqlite:///absolute/path.db or sqlite://relative/path.db", data)
		}
		return SQLite, path, nil
	case strings.Contains(data, "://"):
		scheme, _, _ := strings.Cut(data, "://")
		return "", "", fmt.Errorf("the data location's scheme %q is not supported; give a SQLite file path, sqlite:///PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE", scheme)
	}
	if meant, ok := mistypedURL(data); ok {
		return "", "", fmt.Errorf("the data location starts like a PostgreSQL URL but lacks its \"://\"; did you mean %s?", meant)
	}
	if keywordValue(data) {
		return "", "", fmt.Errorf("the data location %q is a libpq keyword/value string, not a file path; write it as a URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…", redactKeywordValue(data))
	}
	return SQLite, data, nil
}

// Redact returns data safe to print: a PostgreSQL URL with its password
// replaced (postgres.Redact), a mistyped one as the URL it meant
// (redacted), a libpq keyword/value string with password=xxxxx, anything
// else as is.
func Redact(data string) string {
	if k, _, err := Parse(data); err == nil && k == Postgres {
		return postgres.Redact(data)
	}
	if meant, ok := mistypedURL(data); ok {
		return meant // the URL it meant, redacted: the typo may carry a password
	}
	if keywordValue(data) {
		return redactKeywordValue(data)
	}
	if strings.Contains(data, "://") {
		scheme, _, _ := strings.Cut(data, "://")
		return scheme + "://…" // an unsupported URL may carry a password too
	}
	return data
}

// Open opens (creating or migrating) the store data names with default
// options. Errors name the location redacted; a database newer than this
// binary wraps store.ErrTooNew, an unreachable one store.ErrUnavailable.
func Open(ctx context.Context, data string) (store.Store, error) {
	kind, path, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if kind == Postgres {
		return postgres.Open(ctx, data, postgres.Options{})
	}
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	return st, nil
}
