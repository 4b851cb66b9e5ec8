package storeurl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store/postgres"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlite"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind Kind
		path string
		err  string
	}{
		{in: "/var/lib/takoform/host.db", kind: SQLite, path: "/var/lib/takoform/host.db"},
		{in: "host.db", kind: SQLite, path: "host.db"},
		{in: "sqlite:///var/lib/host.db", kind: SQLite, path: "/var/lib/host.db"},
		{in: "sqlite://rel/host.db", kind: SQLite, path: "rel/host.db"},
		{in: "postgres://u:p@db/app", kind: Postgres},
		{in: "postgresql://u:p@db/app", kind: Postgres},
		{in: "sqlite://", err: "names no file"},
		{in: "mysql://u:p@db/app", err: `scheme "mysql" is not supported`},
		{in: "", err: "is empty"},
		// plain paths that only look odd stay paths
		{in: "/srv/my data/host.db", kind: SQLite, path: "/srv/my data/host.db"},
		{in: "/home/me@corp/takoform/host.db", kind: SQLite, path: "/home/me@corp/takoform/host.db"},
		{in: "postgres/host.db", kind: SQLite, path: "postgres/host.db"},
		{in: "postgresdata.db", kind: SQLite, path: "postgresdata.db"},
		{in: "/var/lib/a=b/host.db", kind: SQLite, path: "/var/lib/a=b/host.db"},
		// a PostgreSQL URL missing "://"
		{in: "postgres//u:Sekrit@h/db", err: "did you mean postgres://u:xxxxx@h/db?"},
		{in: "postgres:/u:Sekrit@h/db", err: "did you mean postgres://u:xxxxx@h/db?"},
		{in: "postgresql//u:Sekrit@h/db", err: "did you mean postgres://u:xxxxx@h/db?"},
		{in: "postgres:u:Sekrit@h/db", err: `lacks its "://"`},
		// a libpq keyword/value string
		{in: "host=127.0.0.1 password=Sekrit dbname=x", err: `"host=127.0.0.1 password=xxxxx dbname=x" is a libpq keyword/value string, not a file path; write it as a URL: postgres://`},
		{in: "dbname=x user=u password='Se krit'", err: "password=xxxxx"},
		{in: "sslmode=disable", err: "libpq keyword/value"},
	} {
		kind, path, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error = %v, want one saying %q", c.in, err, c.err)
			}
			if err != nil && (strings.Contains(err.Error(), ":p@") || strings.Contains(err.Error(), "krit")) {
				t.Errorf("Parse(%q) error %q shows the password", c.in, err)
			}
			continue
		}
		if err != nil || kind != c.kind || path != c.path {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q", c.in, kind, path, err, c.kind, c.path)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@db/app": "postgres://u:xxxxx@db/app",
		"/var/lib/host.db":           "/var/lib/host.db",
		"mysql://u:secret@db/app":    "mysql://…",
		"postgres//u:secret@db/app":  "postgres://u:xxxxx@db/app",
		"host=db password=secret":    "host=db password=xxxxx",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	st, err := Open(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, ok := st.(*sqlite.Store); !ok || s.Path() != path {
		t.Errorf("Open(sqlite://%s) = %T, want a SQLite store on the path", path, st)
	}
}

func TestOpenPostgres(t *testing.T) {
	url := pgtest.URL(t)
	st, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok := st.(*postgres.Store); !ok {
		t.Errorf("Open(postgres URL) = %T, want a PostgreSQL store", st)
	}
}
