// Package pgtest gives a test its own fresh PostgreSQL database on the
// server named by TAKOFORM_TEST_POSTGRES (a postgres:// URL whose user may
// create databases; `scripts/postgres.sh run -- COMMAND` starts a
// throwaway server and sets it, and `make test` runs through it). Without
// the variable a test that asks for a database is skipped, saying so.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the server URL variable.
const EnvVar = "TAKOFORM_TEST_POSTGRES"

// ServerURL returns the server URL, skipping t when EnvVar is unset.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvVar)
	if u == "" {
		t.Skipf("PostgreSQL tests skipped: %s is unset; run through scripts/postgres.sh run -- go test … (make test does)", EnvVar)
	}
	return u
}

// URL creates a new empty database on the server (CREATE DATABASE), drops
// it when t ends (after t's later cleanups, such as closing a store), and
// returns its URL. It skips t when EnvVar is unset and fails t when the
// server cannot be reached.
func URL(t testing.TB) string {
	t.Helper()
	server := ServerURL(t)
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "takoform_test_" + hex.EncodeToString(b[:])
	admin := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create test database on %s: %v", EnvVar, err)
	}
	t.Cleanup(func() {
		if err := admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return WithDatabase(t, server, name)
}

// WithDatabase returns serverURL naming database instead.
func WithDatabase(t testing.TB, serverURL, database string) string {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("%s does not parse as a URL", EnvVar)
	}
	u.Path = "/" + database
	return u.String()
}

// NoPassword fails t when text (what: a log, an error, an output) shows
// the password of dbURL.
func NoPassword(t testing.TB, dbURL, what, text string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("%s does not parse as a URL", EnvVar)
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(text, pw) {
		t.Errorf("%s shows the database password:\n%s", what, text)
	}
}

// Exec runs sql on the database dbURL names, failing t on any error (a
// test's set-up as the server's user, initdb's superuser).
func Exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect for %s: %v", sql, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
