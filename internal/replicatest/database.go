package replicatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvPostgres names the PostgreSQL server the tests use
// (postgres://user@127.0.0.1:port/db); scripts/postgres.sh sets it.
const EnvPostgres = "TAKOFORM_TEST_POSTGRES"

// Database creates a fresh, empty database on the server EnvPostgres
// names and returns its URL; the database is dropped when the test ends.
// Without EnvPostgres the test is skipped, saying why.
func Database(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skip(ErrNoPostgres.Error())
	}
	u, err := CreateDatabase(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DropDatabase(context.Background(), base, u); err != nil {
			t.Logf("drop test database: %v", err)
		}
	})
	return u
}

// CreateDatabase creates a database with a random name on the server of
// base (a postgres:// URL) and returns the URL naming it.
func CreateDatabase(ctx context.Context, base string) (string, error) {
	var raw [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	name := "takoform_test_" + hex.EncodeToString(raw[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", EnvPostgres, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create test database: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("%s is not a URL: %w", EnvPostgres, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DropDatabase drops the database dbURL names (a URL CreateDatabase made),
// disconnecting whatever still uses it.
func DropDatabase(ctx context.Context, base, dbURL string) error {
	u, err := url.Parse(dbURL)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{u.Path[1:]}.Sanitize()+" WITH (FORCE)")
	return err
}
