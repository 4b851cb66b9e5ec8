package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store/sqlite"
)

// TestHostBackupDataLocation: `host backup` resolves --data and
// TAKOFORM_DATA as serve does: sqlite:///PATH names the file, and a
// PostgreSQL URL is a usage error that names it without its password and
// points at pg_dump -Fc.
func TestHostBackupDataLocation(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "host.db")
	st, err := sqlite.Open(context.Background(), data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := filepath.Join(dir, "copy.db")
	if code, stdout, errOut := run("host", "backup", "--data", "sqlite://"+data, out); code != 0 || !strings.Contains(stdout, "backup of "+data+" written to "+out) {
		t.Fatalf("backup of sqlite://%s: exit %d %q %q", data, code, stdout, errOut)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("the copy: %v", err)
	}

	const url = "postgres://takoform:S3cretPW@127.0.0.1:5432/takoform"
	check := func(how string, code int, stdout, errOut string) {
		t.Helper()
		if code != 2 || !strings.Contains(errOut, "postgres://takoform:xxxxx@127.0.0.1:5432/takoform") || !strings.Contains(errOut, "pg_dump -Fc") {
			t.Errorf("backup with %s: exit %d %q %q; want a usage error naming the URL redacted and pg_dump -Fc", how, code, stdout, errOut)
		}
		if strings.Contains(stdout+errOut, "S3cretPW") {
			t.Errorf("backup with %s printed the password: %q %q", how, stdout, errOut)
		}
	}
	pgOut := filepath.Join(dir, "pg.db")
	code, stdout, errOut := run("host", "backup", "--data", url, pgOut)
	check("--data", code, stdout, errOut)
	t.Setenv("TAKOFORM_DATA", url)
	code, stdout, errOut = run("host", "backup", pgOut)
	check("TAKOFORM_DATA", code, stdout, errOut)
	if _, err := os.Stat(pgOut); !os.IsNotExist(err) {
		t.Errorf("a refused backup wrote %s: %v", pgOut, err)
	}
}
