package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// A create on a state taken for granted (KeyStateExpectFree) is one round
// trip: BEGIN, the locks, the check, the inserts and COMMIT. At a taken
// key the check fails that round trip and fn runs again on the state as
// KeyState reads it, writing nothing of the first run (decision
// spec/decisions/0048-postgres-create-one-round-trip.md).
func TestCreateOnAFreeKeyIsOneRoundTrip(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTestWith(t, via, Options{MaxConns: 1}) // one connection: its statements stay prepared
	runs := 0
	createAt := func(name, idemKey string) error {
		runs = 0
		k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: name}
		replay := &store.IdempotencyKey{Tenant: "acme", Principal: "alice", Space: "prod", Key: idemKey}
		return s.Update(context.Background(), func(tx store.Tx) error {
			runs++
			st, err := tx.KeyStateExpectFree(k, replay)
			if err != nil || st.Resource != nil || st.Replay != nil {
				return err
			}
			if err := tx.CreateResource(&store.Resource{Key: k, UID: "uid-" + name + "-" + idemKey, Spec: []byte(`{}`), Status: []byte(`{}`)}); err != nil {
				return err
			}
			return tx.ClaimIdempotency(&store.Idempotency{Tenant: "acme", Principal: "alice", Space: "prod", Key: idemKey, Status: 201})
		})
	}
	// trips -1: not counted. A failed check fails its whole batch, whose
	// statements pgx then prepares again on that connection, so the round
	// trips of a taken key and of the next create are pgx's business.
	for i, c := range []struct {
		name, idemKey string
		trips, runs   int64
	}{
		{"warm-up", "k0", -1, 1}, // the connection's first use prepares the statements
		{"free", "k1", 1, 1},
		{"free", "k2", -1, 2},  // the resource exists: fn runs again and creates nothing
		{"other", "k1", -1, 2}, // the idempotency key is recorded: the same
		{"another", "k3", -1, 1},
		{"yet another", "k4", 1, 1},
	} {
		before := proxy.RoundTrips()
		if err := createAt(c.name, c.idemKey); err != nil {
			t.Fatalf("case %d (%s, %s): %v", i, c.name, c.idemKey, err)
		}
		if n := proxy.RoundTrips() - before; c.trips >= 0 && n != c.trips || int64(runs) != c.runs {
			t.Errorf("case %d (%s, %s): %d round trips and %d runs of fn, want %d and %d", i, c.name, c.idemKey, n, runs, c.trips, c.runs)
		}
	}
	err := s.View(context.Background(), func(tx store.Tx) error {
		r, err := tx.Resource(store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "free"})
		if err == nil && r.UID != "uid-free-k1" {
			t.Errorf("the resource at free is %s, want the first create's uid-free-k1", r.UID)
		}
		if _, err := tx.Resource(store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "other"}); err == nil {
			t.Error("the create under a recorded idempotency key was stored")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A create's one round trip carries its COMMIT: when it finds its pooled
// connection dead, the outcome is unknown and the Update fails with
// store.ErrUnavailable, fn having run once — it is never run again on
// another connection as a stale first round trip would be (decision
// spec/decisions/0048-postgres-create-one-round-trip.md, 4).
func TestCreateOnADeadConnectionIsNotRunAgain(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTestWith(t, via, Options{MaxConns: 1})
	runs := 0
	createAt := func(name string) error {
		runs = 0
		k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: name}
		return s.Update(context.Background(), func(tx store.Tx) error {
			runs++
			if _, err := tx.KeyStateExpectFree(k, nil); err != nil {
				return err
			}
			return tx.CreateResource(&store.Resource{Key: k, UID: "uid-" + name, Spec: []byte(`{}`), Status: []byte(`{}`)})
		})
	}
	if err := createAt("warm-up"); err != nil { // the connection prepares the create's statements
		t.Fatal(err)
	}
	proxy.Down() // the pool's one connection is now dead
	proxy.Up()
	err := createAt("dead")
	if !errors.Is(err, store.ErrUnavailable) || runs != 1 {
		t.Errorf("a create whose one round trip found its connection dead: %v after %d runs of fn, want ErrUnavailable after 1", err, runs)
	}
}

// The check of a state taken for granted runs after the key's lock: a
// create that waits for a writer holding the key sees what the writer
// committed and runs fn again on it, instead of failing on the unique
// index (decision spec/decisions/0048-postgres-create-one-round-trip.md, 2).
func TestCreateChecksAfterTheKeysLock(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "held"}
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.KeyState(k, nil); err != nil {
				return err
			}
			close(holding)
			<-release
			return tx.CreateResource(&store.Resource{Key: k, UID: "uid-holder", Spec: []byte(`{}`), Status: []byte(`{}`)})
		})
	}()
	<-holding
	runs := 0
	created := make(chan error, 1)
	go func() {
		created <- s.Update(context.Background(), func(tx store.Tx) error {
			runs++
			st, err := tx.KeyStateExpectFree(k, nil)
			if err != nil || st.Resource != nil {
				return err
			}
			return tx.CreateResource(&store.Resource{Key: k, UID: "uid-create", Spec: []byte(`{}`), Status: []byte(`{}`)})
		})
	}()
	for waiting := false; !waiting; { // the create waits for the holder's lock
		select {
		case err := <-created:
			t.Fatalf("the create ended (%v) while another transaction held its key", err)
		case <-time.After(10 * time.Millisecond):
		}
		if err := s.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the holder's Update: %v", err)
	}
	if err := <-created; err != nil || runs != 2 {
		t.Errorf("a create that waited for its key's writer: %v after %d runs of fn, want nil after 2", err, runs)
	}
}
