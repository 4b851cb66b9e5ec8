package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// testRole creates a login role with password on the test server,
// dropped when t ends (after the databases made after it), and returns
// its name.
func testRole(t *testing.T, password string) string {
	t.Helper()
	server := pgtest.ServerURL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	role := "takoform_role_" + hex.EncodeToString(b[:])
	pgtest.Exec(t, server, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"'")
	t.Cleanup(func() { pgtest.Exec(t, server, "DROP ROLE IF EXISTS "+role) })
	return role
}

// asRole returns dbURL with its user and password replaced; the password
// is written into the URL verbatim (unencoded) when raw.
func asRole(t *testing.T, dbURL, role, password string, raw bool) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	s := u.String()
	if password == "" {
		return s
	}
	pw := url.UserPassword(role, password).String()
	if raw {
		pw = role + ":" + password
	}
	return strings.Replace(s, "//"+role+"@", "//"+pw+"@", 1)
}

// A password holding '@', '#', '?' or '/' unencoded is refused before
// anything connects, with no part of it in the error; the two repairs the
// refusal names, the percent-encoded URL and PGPASSWORD, both open.
func TestOpenRefusesAnUnencodedPassword(t *testing.T) {
	const password = "p@QZq#Wv/Xk?Yj"
	role := testRole(t, password)
	db := pgtest.URL(t)
	name := strings.TrimPrefix(mustParse(t, db).Path, "/")
	pgtest.Exec(t, db, "ALTER DATABASE "+name+" OWNER TO "+role)
	for _, pw := range []string{password, "p@QZqWv", "pQZq#Wv", "pQZq/Wv@Xk", "pQZq?Wv", "p@QZq?Wv", "p@QZq/Wv", "1234?abc=QZqWv", "?k=QZqWv", "1234/QZqWv"} {
		raw := asRole(t, db, role, pw, true)
		_, err := Open(context.Background(), raw, Options{})
		if err == nil || !strings.Contains(err.Error(), "percent-encode it (@ as %40") {
			t.Errorf("Open of a URL with the password %q unencoded: %v; want the refusal naming percent-encoding", pw, err)
			continue
		}
		if r := Redact(raw); strings.Contains(r, "QZq") || strings.Contains(r, "Wv") {
			t.Errorf("Redact shows part of the password: %s", r)
		}
		for _, part := range []string{"QZq", "Wv", "Xk", "Yj"} {
			if strings.Contains(err.Error(), part) {
				t.Errorf("the refusal shows part %q of the password: %v", part, err)
			}
		}
	}
	s, err := Open(context.Background(), asRole(t, db, role, password, false), Options{})
	if err != nil {
		t.Fatalf("Open with the password percent-encoded: %v", err)
	}
	_ = s.Close()
	t.Setenv("PGPASSWORD", password)
	s, err = Open(context.Background(), asRole(t, db, role, "", false), Options{})
	if err != nil {
		t.Fatalf("Open with the password as PGPASSWORD: %v", err)
	}
	_ = s.Close()
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A database that does not exist is refused naming the statement that
// creates it, and after that statement Open succeeds.
func TestOpenSaysHowToCreateAMissingDatabase(t *testing.T) {
	server := pgtest.ServerURL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "takoform_missing_" + hex.EncodeToString(b[:])
	dbURL := pgtest.WithDatabase(t, server, name)
	_, err := Open(context.Background(), dbURL, Options{})
	if err == nil {
		t.Fatal("Open of a database that does not exist succeeded")
	}
	stmt := "CREATE DATABASE " + name + " OWNER " + mustParse(t, server).User.Username()
	if !strings.Contains(err.Error(), stmt) {
		t.Fatalf("Open of a missing database: %v; want it to say %q", err, stmt)
	}
	pgtest.NoPassword(t, dbURL, "the refusal", err.Error())
	pgtest.Exec(t, server, stmt)
	t.Cleanup(func() { pgtest.Exec(t, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	s, err := Open(context.Background(), dbURL, Options{})
	if err != nil {
		t.Fatalf("Open after %s: %v", stmt, err)
	}
	_ = s.Close()
}

// A role that may not create tables in schema public (PostgreSQL 15's
// default for a role that does not own the database) is refused naming
// both repairs, and after either one Open succeeds.
func TestOpenSaysHowToLetTheRoleCreateItsTables(t *testing.T) {
	const password = "role-secret"
	role := testRole(t, password)
	for _, repair := range []string{"GRANT CREATE ON SCHEMA public TO " + role, "ALTER DATABASE %s OWNER TO " + role} {
		db := pgtest.URL(t)
		name := strings.TrimPrefix(mustParse(t, db).Path, "/")
		as := asRole(t, db, role, password, false)
		_, err := Open(context.Background(), as, Options{})
		stmt := strings.Replace(repair, "%s", name, 1)
		if err == nil || !strings.Contains(err.Error(), stmt) {
			t.Fatalf("Open as a role without CREATE on schema public: %v; want it to say %q", err, stmt)
		}
		pgtest.NoPassword(t, as, "the refusal", err.Error())
		pgtest.Exec(t, db, stmt)
		s, err := Open(context.Background(), as, Options{})
		if err != nil {
			t.Fatalf("Open after %s: %v", stmt, err)
		}
		_ = s.Close()
	}
}

// URLs whose password net/url and pgx would read differently, or whose
// query net/url reads only in part, never show it: Open fails (refused,
// or unable to reach the port where nothing listens) and neither its
// error nor Redact holds any part of the password. No server is needed.
func TestNoPartOfAnUnencodedPasswordIsShown(t *testing.T) {
	for _, raw := range []string{
		"postgres://rv2a:1234?abc=QZqWv@127.0.0.1:1/db?sslmode=disable",
		"postgres://u:?k=QZqWv@127.0.0.1:1/db",
		"postgres://u:1234?abc=QZqWv@127.0.0.1:1,127.0.0.2:2/db",
		"postgres://rv2?x=y:QZqWv@127.0.0.1:1/db",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=abc;QZqWv",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=50%QZqWv",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=abcdef&QZqWv",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&sslpassword=abc;QZqWv",
		"postgres://u:p@QZqWv@[::1]:1/db",
		"postgresql://u:p/QZqWv@127.0.0.1:1/db",
		"postgres://u:pw?x=y@QZqWv@127.0.0.1:1/db",
		"postgres://u:1234?host=QZqWv@127.0.0.1:1/db",
		"postgres://u:1234?host=x&y=QZqWv@127.0.0.1:1/db",
		"postgres://u@127.0.0.1:1/db? password=QZqWv",
		"postgres://u@127.0.0.1:1/db?password =QZqWv",
		"postgres://u@127.0.0.1:1/db?sslmode=disable& sslpassword=QZqWv",
		"postgres://u:1?b=c@QZq Wv@127.0.0.1:1/db",
		"postgres://alice:1234/QZqWv?x=y@127.0.0.1:1/db",
		"host=127.0.0.1 port=1 user=u password=QZqWv dbname=db",
		"postgres://u:QZq%zzWv@127.0.0.1:1/db",
		"postgres://u@127.0.0.1:1,[::1?a=]:1/db?password=QZqWv",
		"postgres://u@127.0.0.1:1,[::1?a=]:1/db?sslpassword=QZqWv&sslmode=bogus",
		"postgres://127.0.0.1:1?user=u&password=QZq@Wv",
		"postgres://u:QZqWv/db",
		" postgres://u:QZq Wv@127.0.0.1:1/db?sslmode=disable",
		"Postgres://u:QZqWv@127.0.0.1:1/db",
		"postgres:/u:QZqWv@127.0.0.1:1/db",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Open(ctx, raw, Options{})
		cancel()
		if err == nil {
			t.Errorf("Open(%s) succeeded", Redact(raw))
			continue
		}
		if strings.Contains(err.Error(), "QZq") || strings.Contains(err.Error(), "Wv") {
			t.Errorf("Open's error shows part of the password: %v", err)
		}
		if r := Redact(raw); strings.Contains(r, "QZq") || strings.Contains(r, "Wv") {
			t.Errorf("Redact shows part of the password: %s", r)
		}
	}
}

// URLs whose userinfo is unambiguous are not refused: a percent-encoded
// password, an '@' in a parameter's value, several hosts, no userinfo.
func TestUnambiguousURLsAreNotRefused(t *testing.T) {
	// libpq's percent-encoded socket directory: net/url cannot parse it
	// (Redact hides it whole), pgx can, and it is not refused.
	if p := ambiguousUserinfo("postgresql://%2Fvar%2Frun%2Fpostgresql/app?user=alice@corp"); p != "" {
		t.Errorf("the socket-directory URL is refused: %s", p)
	}
	for _, u := range []string{
		"postgres://u:p%40s%23s%2Fw%3Fd@db:5432/app?sslmode=disable",
		"postgres://db/app?user=alice@corp&password=secret",
		"postgres://u:pw@h1:5432,h2:5433/app?target_session_attrs=read-write",
		"postgres://h1,h2/app?user=alice@corp",
		"postgresql:///app?host=/var/run/postgresql",
		"postgres://u@db/app%40x",
		"postgres://u:pw@[::1]:5432/app",
		"postgres://u:pw@db/app?sslrootcert=/home/alice@corp.example/root.crt",
		"postgres://db/app?user=alice@corp&password=pw",
	} {
		if p := ambiguousUserinfo(u); p != "" {
			t.Errorf("ambiguousUserinfo(%q) = %q, want \"\"", u, p)
		}
		if r := Redact(u); strings.HasPrefix(r, "(") {
			t.Errorf("Redact(%q) = %q, want the URL with its secrets masked", u, r)
		}
	}
}

// A role refused on tables another role created (the database migrated as
// one role, then given to another) gets no repair sentence: neither the
// ownership nor the schema grant would mend it; handing the tables over
// (REASSIGN OWNED, as handbook/postgresql.md says) does.
func TestOpenNamesNoUntrueRepair(t *testing.T) {
	const password = "role-secret"
	first, second := testRole(t, password), testRole(t, password)
	db := pgtest.URL(t)
	name := strings.TrimPrefix(mustParse(t, db).Path, "/")
	pgtest.Exec(t, db, "ALTER DATABASE "+name+" OWNER TO "+first)
	s, err := Open(context.Background(), asRole(t, db, first, password, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	pgtest.Exec(t, db, "ALTER DATABASE "+name+" OWNER TO "+second)
	_, err = Open(context.Background(), asRole(t, db, second, password, false), Options{})
	if err == nil {
		t.Fatal("Open as a role that owns none of the tables succeeded")
	}
	for _, untrue := range []string{"ALTER DATABASE", "GRANT CREATE"} {
		if strings.Contains(err.Error(), untrue) {
			t.Errorf("the refusal suggests %s, which would not mend it: %v", untrue, err)
		}
	}
	// What handbook/postgresql.md says does mend it: the tables handed over.
	reassign := "REASSIGN OWNED BY " + first + " TO " + second
	pgtest.Exec(t, db, reassign)
	s, err = Open(context.Background(), asRole(t, db, second, password, false), Options{})
	if err != nil {
		t.Fatalf("Open after %s: %v", reassign, err)
	}
	_ = s.Close()
}
