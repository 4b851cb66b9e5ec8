package cli

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/sqlite"
)

// `host serve` with TAKOFORM_DATA=postgres://… (no --data) serves from
// the database and prints its URL with the password redacted.
func TestServeOnPostgresFromEnvironment(t *testing.T) {
	dbURL := pgtest.URL(t)
	addr := freePort(t)
	args := strings.Join([]string{"host", "serve", "--listen", addr, "--dev-token", "tok"}, "\x1f")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+args, EnvName("data")+"="+dbURL)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	c := connect(t, addr)
	if _, err := create(context.Background(), c, kvRef(t, c), "on-postgres"); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()
	if !strings.Contains(out.String(), "data postgres://takoform:xxxxx@") {
		t.Errorf("the host did not name its database redacted:\n%s", out.String())
	}
	pgtest.NoPassword(t, dbURL, "the host's output", out.String())
}

func TestServeRefusesUnknownDataScheme(t *testing.T) {
	code, _, errOut := run("host", "serve", "--listen", "127.0.0.1:0", "--dev-token", "t", "--data", "mysql://u:secret@db/x")
	if code != 2 || !strings.Contains(errOut, `scheme "mysql" is not supported`) || !strings.Contains(errOut, "postgres://USER:PASSWORD@HOST:PORT/DATABASE") {
		t.Errorf("exit %d, stderr %q; want 2 naming the unsupported scheme and the supported forms", code, errOut)
	}
	if strings.Contains(errOut, "secret") {
		t.Errorf("stderr shows the password: %q", errOut)
	}
}

// `host copy` copies a file into an empty database, says the counts and
// digests match, and refuses the same (now non-empty) database again.
func TestHostCopyCommand(t *testing.T) {
	dbURL := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "host.db")
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(context.Background(), func(tx store.Tx) error {
		return tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "n"},
			UID: "u-1", Generation: 1, Revision: 1, Spec: []byte(`{}`), Status: []byte(`{}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := run("host", "copy", "--from", path, "--to", dbURL)
	if code != 0 || !strings.Contains(out, "counts and digests match") || !regexp.MustCompile(`(?m)^resources +1 rows`).MatchString(out) {
		t.Fatalf("host copy: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines[:len(lines)-1] { // one line per table, then the summary
		if got, want := strings.Index(line, " rows "), strings.Index(lines[0], " rows "); got != want {
			t.Errorf("the tables' row counts do not line up: %q has \"rows\" at %d, the first line at %d", line, got, want)
		}
	}
	pgtest.NoPassword(t, dbURL, "host copy's output", out+errOut)
	code, _, errOut = run("host", "copy", "--from", path, "--to", dbURL)
	if code != 1 || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "resources") {
		t.Errorf("second host copy: exit %d, stderr %q; want 1 naming the non-empty tables", code, errOut)
	}
	pgtest.NoPassword(t, dbURL, "host copy's refusal", errOut)
	code, _, errOut = run("host", "copy", "--from", path, "--to", path)
	if code != 2 || !strings.Contains(errOut, "--to must be a postgres://") {
		t.Errorf("host copy --to FILE: exit %d, stderr %q; want 2", code, errOut)
	}
}

// A location that means PostgreSQL but is no URL (its "://" lost) is
// refused with storeurl's diagnosis, which names the URL it meant; the
// refusal never shows it as the well-formed URL it was not, nor the
// password.
func TestHostCopyNamesAMistypedURL(t *testing.T) {
	typo := "postgres//takoform:secret-pw@127.0.0.1:1/takoform"
	for _, args := range [][]string{{"--from", typo, "--to", "postgres://u@127.0.0.1:1/x"}, {"--from", "host.db", "--to", typo}} {
		code, _, errOut := run(append([]string{"host", "copy"}, args...)...)
		if code != 2 || !strings.Contains(errOut, `lacks its "://"; did you mean postgres://takoform:xxxxx@127.0.0.1:1/takoform?`) {
			t.Errorf("host copy %v: exit %d, stderr %q; want 2 saying the URL lacks its \"://\"", args, code, errOut)
		}
		if strings.Contains(errOut, "got postgres://") || strings.Contains(errOut, "secret-pw") {
			t.Errorf("host copy %v: stderr %q shows the location as a well-formed URL or shows its password", args, errOut)
		}
	}
}

// A database that cannot be reached stops `host serve` with an error that
// names it without its password.
func TestServeUnreachableDatabase(t *testing.T) {
	dead := "postgres://takoform:secret-pw@127.0.0.1:1/takoform?sslmode=disable&connect_timeout=5"
	code, _, errOut := run("host", "serve", "--listen", "127.0.0.1:0", "--dev-token", "t", "--data", dead)
	if code != 1 || !strings.Contains(errOut, "postgres://takoform:xxxxx@127.0.0.1:1/takoform") || !strings.Contains(errOut, "the database is unavailable") {
		t.Errorf("exit %d, stderr %q; want 1 naming the database (redacted) as unavailable", code, errOut)
	}
	pgtest.NoPassword(t, dead, "the refusal", errOut)
}

// `host copy` of a file holding a replay record PostgreSQL cannot hold (an
// Idempotency-Key that is not UTF-8, kept by an older host) copies the
// rest, lists the record it left behind and why, and exits 0.
func TestHostCopyReportsLeftRows(t *testing.T) {
	dbURL := pgtest.URL(t)
	path := filepath.Join(t.TempDir(), "host.db")
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO idempotency (tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at)
		VALUES ('acme', 'p', 'prod', CAST(x'636166e9' AS TEXT), 'f', 400, '', x'7b7d', '', '', 0)`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run("host", "copy", "--from", path, "--to", dbURL)
	if code != 0 || !strings.Contains(out, `left behind: idempotency row lane="forms.takoform.com/v1alpha3" tenant="acme" principal="p" space="prod" key="caf\xe9": its key holds bytes that are not UTF-8`) ||
		!strings.Contains(out, "replay record no request can reach") || !strings.HasSuffix(out, "counts and digests match; 1 rows left behind, listed above\n") {
		t.Fatalf("host copy: exit %d\n%s%s", code, out, errOut)
	}
}
