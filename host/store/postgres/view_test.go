package postgres

import (
	"context"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// A View's reads: a kind of View that read one statement last time reads
// it in one round trip, without a transaction; when it reads again, its
// first read is checked inside the transaction, and a first read that
// changed in between runs the function again (repo decision 0020).
func TestViewOfOneRead(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTestWith(t, via, Options{MaxConns: 1}) // one connection: its statements stay prepared
	ctx := context.Background()
	createIn(t, s, "acme", "x", "y")
	var runs int
	var again bool
	var between func()
	var gotX, gotY *store.Resource
	fn := func(tx store.Tx) error { // one kind of View: one function value
		runs++
		var err error
		if gotX, err = tx.ResourceByUID("acme-x"); err != nil {
			return err
		}
		if !again {
			return nil
		}
		if between != nil && runs == 1 {
			between()
		}
		gotY, err = tx.ResourceByUID("acme-y")
		return err
	}
	view := func() error {
		runs = 0
		return s.View(ctx, fn)
	}
	if err := view(); err != nil { // the kind's first call: in a transaction
		t.Fatal(err)
	}
	before := proxy.RoundTrips()
	if err := view(); err != nil {
		t.Fatal(err)
	}
	if n := proxy.RoundTrips() - before; n != 1 {
		t.Errorf("a View of one read made %d round trips, want 1", n)
	}

	again = true
	if err := view(); err != nil || runs != 1 || gotY == nil {
		t.Fatalf("a View that reads again: err %v, %d runs, second read %v; want no error, one run, both read", err, runs, gotY)
	}

	again = false
	_ = view() // one read again: single next time
	again = true
	between = func() { // x changes between the View's first read and its second
		if n := s.pool.Stat().AcquiredConns(); n != 0 {
			t.Fatalf("after its first read the View holds %d connections, want none (the read ran alone)", n)
		}
		err := s.Update(ctx, func(tx store.Tx) error {
			r, err := tx.ResourceByUID("acme-x")
			if err != nil {
				return err
			}
			r.Revision++
			return tx.UpdateResource(r)
		})
		if err != nil {
			t.Error(err)
		}
	}
	if err := view(); err != nil {
		t.Fatal(err)
	}
	if runs != 2 || gotX.Revision != 1 {
		t.Errorf("a View whose first read changed before its second: %d runs, read revision %d; want 2 runs, the second reading revision 1", runs, gotX.Revision)
	}
}
