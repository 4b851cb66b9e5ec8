package postgres

import (
	"context"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// An Update whose first round trip, a read, finds its pooled connection
// dead (the server went away and came back) runs fn again on another and
// succeeds: nothing of it reached a transaction that could commit
// (decision spec/decisions/0020-postgres-round-trips.md, 4).
func TestAReadOnADeadConnectionRunsAgain(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTestWith(t, via, Options{MaxConns: 1})
	runs := 0
	k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "x"}
	read := func() error {
		runs = 0
		return s.Update(context.Background(), func(tx store.Tx) error {
			runs++
			_, err := tx.KeyState(k, nil)
			return err
		})
	}
	if err := read(); err != nil { // the connection prepares the read
		t.Fatal(err)
	}
	proxy.Down() // the pool's one connection is now dead
	proxy.Up()
	if err := read(); err != nil || runs != 2 {
		t.Errorf("a read whose first round trip found its connection dead: %v after %d runs of fn, want nil after 2", err, runs)
	}
}
