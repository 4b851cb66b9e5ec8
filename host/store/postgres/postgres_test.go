package postgres

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/storetest"
)

func openTest(t testing.TB, url string) *Store {
	t.Helper()
	return openTestWith(t, url, Options{})
}

func openTestWith(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// The one behavioural suite, each case on a fresh database.
func TestStore(t *testing.T) {
	pgtest.ServerURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t, pgtest.URL(t)) })
}

// An operation one transaction claims is ErrLocked to another until the
// first ends; then the other claims it.
func TestClaimOperationLocks(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	o := &store.Operation{ID: "op_1", Tenant: "acme", Principal: "alice", Action: "apply"}
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutOperation(o) }); err != nil {
		t.Fatal(err)
	}
	claimed, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.ClaimOperation("op_1"); err != nil {
				return err
			}
			close(claimed)
			<-release
			return nil
		})
	}()
	<-claimed
	err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.ClaimOperation("op_1")
		return err
	})
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("ClaimOperation while another transaction holds it: got %v, want ErrLocked", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first claim: %v", err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.ClaimOperation("op_1")
		return err
	})
	if err != nil {
		t.Errorf("ClaimOperation after the holder committed: %v", err)
	}
}

// Replicas starting together on one empty database migrate it once and
// all open it.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 4
	errs := make(chan error, replicas)
	for range replicas {
		go func() {
			s, err := Open(context.Background(), url, Options{})
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range replicas {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
	s := openTest(t, url)
	var applied int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if want := countMigrations(t); applied != want {
		t.Errorf("goose_db_version has %d applied migrations, want %d (each once)", applied, want)
	}
}

func countMigrations(t *testing.T) int {
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// highestMigration is the highest version among the migration files (the
// numbers may have gaps while branches take numbers apart).
func highestMigration(t *testing.T) int {
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	high := 0
	for _, e := range entries {
		v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			t.Fatalf("migration file %s has no version prefix", e.Name())
		}
		high = max(high, v)
	}
	return high
}

// A database migrated by a newer binary is refused, naming both versions,
// and its URL's password appears nowhere in the error.
func TestNewerDatabaseRefused(t *testing.T) {
	url := pgtest.URL(t)
	s := openTest(t, url)
	known := highestMigration(t)
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, known+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), url, Options{})
	if !errors.Is(err, store.ErrTooNew) {
		t.Fatalf("Open of a newer database: got %v, want ErrTooNew", err)
	}
	for _, want := range []string{fmt.Sprintf("schema version %d", known+1), fmt.Sprintf("knows up to %d", known)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	pgtest.NoPassword(t, url, "the refusal", err.Error())
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:secret@db:5432/app?sslmode=disable", "postgres://u:xxxxx@db:5432/app?sslmode=disable"},
		{"postgres://u@db/app", "postgres://u@db/app"},
		{"postgres://db/app?password=secret&user=u", "postgres://db/app?password=xxxxx&user=u"},
		{"postgres://u@db/app?sslpassword=secret&sslmode=require", "postgres://u@db/app?sslpassword=xxxxx&sslmode=require"},
		{"postgres://u:sec%zz@db/app", "postgres://u:xxxxx@db/app"},
		{"postgres://u@db/app?password=abc;secret", "postgres://u@db/app?password=xxxxx"},
		{"postgres://u@db/app?sslmode=disable& Pass%77ord =secret", "postgres://u@db/app?sslmode=disable& Pass%77ord =xxxxx"},
		{"postgres://u:1234?host=secret@db/app", hiddenURL},
		{"postgres://u@[::1?a=]:1/db?password=secret", "postgres://u@[::1?a=]:1/db?password=xxxxx"},
		{"host=db password=secret", hiddenURL},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Two Updates that lock two keys in opposite orders deadlock; PostgreSQL
// aborts one, and Update runs its function again: both commit.
func TestDeadlockIsRetried(t *testing.T) {
	deadlock(t, openTest(t, pgtest.URL(t)), true)
}

// An Update that keeps losing past its attempts (here one attempt) is
// ErrUnavailable, which the host answers as retryable backend_unavailable,
// not internal_error.
func TestDeadlockPastTheAttemptsIsUnavailable(t *testing.T) {
	s, err := Open(context.Background(), pgtest.URL(t), Options{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	deadlock(t, s, false)
}

// deadlock runs two Updates that lock two keys in opposite orders. With
// retried set the victim runs again and both commit; otherwise the victim
// must fail with store.ErrUnavailable.
func deadlock(t *testing.T, s *Store, retried bool) {
	t.Helper()
	kx := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "x"}
	ky := kx
	ky.Name = "y"
	var runs [2]atomic.Int32
	held := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	errs := make(chan error, 2)
	for i, order := range [2][2]store.Key{{kx, ky}, {ky, kx}} {
		go func() {
			errs <- s.Update(context.Background(), func(tx store.Tx) error {
				first := runs[i].Add(1) == 1
				if _, err := tx.Resource(order[0]); !errors.Is(err, store.ErrNotFound) {
					return err
				}
				if first { // hold the first key until the other holds its first
					close(held[i])
					<-held[1-i]
				}
				if _, err := tx.Resource(order[1]); !errors.Is(err, store.ErrNotFound) {
					return err
				}
				k := order[0]
				k.Name = fmt.Sprintf("made-by-%d", i)
				return tx.CreateResource(&store.Resource{Key: k, UID: fmt.Sprintf("u-%d", i), Spec: []byte(`{}`), Status: []byte(`{}`)})
			})
		}()
	}
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if !retried {
		if len(failed) != 1 || !errors.Is(failed[0], store.ErrUnavailable) {
			t.Errorf("with one attempt: failures %v; want exactly the victim's, wrapping store.ErrUnavailable", failed)
		}
		return
	}
	for _, err := range failed {
		t.Errorf("Update: %v", err)
	}
	if n := runs[0].Load() + runs[1].Load(); n < 3 {
		t.Errorf("the functions ran %d times in all, want 3 or more (the deadlock's victim runs again)", n)
	}
	err := s.View(context.Background(), func(tx store.Tx) error {
		for _, uid := range []string{"u-0", "u-1"} {
			if _, err := tx.ResourceByUID(uid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("after the deadlock: %v", err)
	}
}

// An operation claimed by a transaction whose connection dies (a replica
// killed mid-commit) is claimable by another as soon as PostgreSQL ends
// the dead session.
func TestClaimOfADeadSessionIsReleased(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	o := &store.Operation{ID: "op_1", Tenant: "acme", Principal: "alice", Action: "apply"}
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutOperation(o) }); err != nil {
		t.Fatal(err)
	}
	claimed, killed := make(chan int32), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(stx store.Tx) error {
			if _, err := stx.ClaimOperation("op_1"); err != nil {
				return err
			}
			var pid int32
			if err := stx.(*tx).conn.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			claimed <- pid
			<-killed
			_, err := stx.Operation("op_1") // the connection is gone
			return err
		})
	}()
	pid := <-claimed
	other := openTest(t, pgtest.WithDatabase(t, pgtest.ServerURL(t), s.pool.Config().ConnConfig.Database))
	var ok bool
	if err := other.pool.QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate the claiming session: %v %v", ok, err)
	}
	close(killed)
	if err := <-first; !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("the killed session's Update: got %v, want ErrUnavailable", err)
	}
	for gone := false; !gone; { // the session ends (and releases its locks) a moment after the signal
		if err := other.pool.QueryRow(t.Context(), `SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&gone); err != nil {
			t.Fatal(err)
		}
	}
	err := other.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.ClaimOperation("op_1")
		return err
	})
	if err != nil {
		t.Errorf("ClaimOperation after the claimant's session died: %v", err)
	}
}

// A function that panics rolls back and returns its connection: with a
// pool of one, the next Update still gets one.
func TestPanicReleasesTheConnection(t *testing.T) {
	s, err := Open(context.Background(), pgtest.URL(t), Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = s.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "x"}, UID: "u-1"}); err != nil {
				return err
			}
			panic("fn panics")
		})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a leaked connection would block the acquire forever
	defer cancel()
	err = s.View(ctx, func(tx store.Tx) error {
		_, err := tx.ResourceByUID("u-1")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		// Close would wait for the leaked connection forever.
		t.Fatalf("after a panicking Update: got %v, want the pool's one connection and no resource (ErrNotFound)", err)
	}
	s.Close()
}

// The pool's size is Options.MaxConns, else the URL's pool_max_conns,
// else 32.
func TestPoolSize(t *testing.T) {
	url := pgtest.URL(t)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "3")
	u.RawQuery = q.Encode()
	three := u.String()
	for _, c := range []struct {
		url  string
		opts Options
		want int32
	}{{url, Options{}, 32}, {three, Options{}, 3}, {three, Options{MaxConns: 5}, 5}} {
		s := openTestWith(t, c.url, c.opts)
		if got := s.pool.Config().MaxConns; got != c.want {
			t.Errorf("Open(%s, %+v): pool of %d connections, want %d", Redact(c.url), c.opts, got, c.want)
		}
	}
}

// A URL whose form is right but a setting is not names the setting pgx
// refused, never the password (a reason that would quote it is withheld);
// one net/url cannot parse says so. Open fails before it connects, so no
// server is needed.
func TestOpenNamesTheRefusedSetting(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"postgres://u:secret-pw@127.0.0.1:1/app?sslmode=bogus", "settings are refused: failed to configure TLS (sslmode is invalid)"},
		{"postgres://u@127.0.0.1:1/app?password=secret-pw&connect_timeout=x", "settings are refused: invalid connect_timeout"},
		{"postgres://u:secret-pw@127.0.0.1:1/app?pool_max_conns=abc", "settings are refused: cannot parse pool_max_conns"},
		{"postgres://u:secret-pw@127.0.0.1:1/app?target_session_attrs=bogus", "settings are refused: unknown target_session_attrs value: bogus"},
		{"postgres://u:secret-pw@127.0.0.1:1/app?target_session_attrs=secret-pw", "settings are refused (the reason is withheld: it quotes the password)"},
		{"postgres://u:secret-pw%zz@127.0.0.1:1/app", "settings are refused: failed to parse as URL (invalid percent-encoded token in password)"},
	} {
		_, err := Open(context.Background(), c.url, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): %v; want it to say %q", Redact(c.url), err, c.want)
			continue
		}
		// The last case's URL holds the password as another setting's
		// value too, which Redact shows: only the reason must not.
		if strings.Contains(strings.TrimPrefix(err.Error(), "open "+Redact(c.url)+": "), "secret-pw") {
			t.Errorf("Open(%s): %v shows the password", Redact(c.url), err)
		}
	}
}
