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
	} {
		kind, path, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error = %v, want one saying %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), ":p@") {
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
