package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/storetest"
)

// Exact reads asked for at the same moment share round trips, and each
// answers what it would alone: its own resource, not found for an absent
// name or another FormRef, the context's error for a caller that gave up
// (repo decision 0045).
func TestExactReadsInBatches(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTest(t, via)
	ctx := context.Background()
	ref := form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:" + fmt.Sprintf("%064d", 1)}
	other := ref
	other.DefinitionVersion = "2.0.0"
	key := func(name string) store.Key {
		return store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: name}
	}
	const stored = 16
	var answers [stored][]byte
	for i := range stored {
		r := storetest.Answered(&store.Resource{Key: key(fmt.Sprintf("r%d", i)), FormRef: ref, UID: fmt.Sprintf("u%d", i),
			Generation: int64(i + 1), Spec: []byte(`{}`), Status: []byte(`{}`)})
		answers[i] = r.Answer
		err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateResource(r) })
		if err != nil {
			t.Fatal(err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	const readers, rounds = 48, 40
	before := proxy.RoundTrips()
	var wg sync.WaitGroup
	errs := make(chan error, readers*rounds)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				n := (g + i) % (stored + 2) // two names past the stored ones are absent
				name := fmt.Sprintf("r%d", n)
				switch (g + i) % 5 {
				case 0: // another FormRef
					if _, err := s.ExactAnswer(ctx, key(name), other); !errors.Is(err, store.ErrNotFound) {
						errs <- fmt.Errorf("%s under another FormRef: %v, want not found", name, err)
					}
				case 1: // a caller that gave up
					if _, err := s.ExactAnswer(cancelled, key(name), ref); !errors.Is(err, context.Canceled) {
						errs <- fmt.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
					}
				default:
					r, err := s.ExactAnswer(ctx, key(name), ref)
					switch {
					case n >= stored && !errors.Is(err, store.ErrNotFound):
						errs <- fmt.Errorf("absent %s: %v, want not found", name, err)
					case n < stored && err != nil:
						errs <- fmt.Errorf("%s: %v", name, err)
					case n < stored && (r.UID != fmt.Sprintf("u%d", n) || r.Generation != int64(n+1) || !bytes.Equal(r.Body, answers[n])):
						errs <- fmt.Errorf("%s read uid %s generation %d body %q, want u%d, %d, its own answer %q", name, r.UID, r.Generation, r.Body, n, n+1, answers[n])
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sent := readers * rounds * 4 / 5 // the cancelled ones send nothing
	if trips := proxy.RoundTrips() - before; trips >= int64(sent) {
		t.Errorf("%d exact reads from %d goroutines took %d round trips: none shared one", sent, readers, trips)
	} else {
		t.Logf("%d exact reads from %d goroutines in %d round trips", sent, readers, trips)
	}
}

// A Store closed while exact reads wait answers them ErrClosed or their
// answer, and Close returns once its loops have ended.
func TestExactReadsDuringClose(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	ctx := context.Background()
	ref := form.FormRef{APIVersion: "a/v1", Kind: "K"}
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, err := s.ExactAnswer(ctx, store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "x"}, ref)
				if errors.Is(err, ErrClosed) {
					return
				}
				if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrUnavailable) {
					t.Errorf("exact read while closing: %v, want not found, unavailable or ErrClosed", err)
					return
				}
			}
		}()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// Exact reads in flight when the database goes away answer, each with its
// resource or an error wrapping store.ErrUnavailable (the read sent again
// alone decides it), and read again once it is back.
func TestExactReadsLoseTheDatabase(t *testing.T) {
	proxy, via := pgtest.NewProxy(t, pgtest.URL(t))
	s := openTest(t, via)
	ctx := context.Background()
	k := store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "x"}
	ref := form.FormRef{APIVersion: "a/v1", Kind: "K", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:" + fmt.Sprintf("%064d", 1)}
	if err := s.Update(ctx, func(tx store.Tx) error {
		return tx.CreateResource(&store.Resource{Key: k, FormRef: ref, UID: "u1", Spec: []byte(`{}`), Status: []byte(`{}`)})
	}); err != nil {
		t.Fatal(err)
	}
	readAll := func(down func()) (lost int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for g := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					if g == 0 && i == 10 && down != nil {
						down()
					}
					r, err := s.ExactAnswer(ctx, k, ref)
					switch {
					case errors.Is(err, store.ErrUnavailable):
						mu.Lock()
						lost++
						mu.Unlock()
					case err != nil:
						t.Errorf("exact read as the database goes: %v, want the resource or store.ErrUnavailable", err)
					case r.UID != "u1":
						t.Errorf("exact read read uid %s, want u1", r.UID)
					}
				}
			}()
		}
		wg.Wait()
		return lost
	}
	if lost := readAll(proxy.Down); lost == 0 {
		t.Fatal("no read saw the database go: the test did not take it away")
	}
	proxy.Up()
	if lost := readAll(nil); lost != 0 {
		t.Errorf("%d reads failed after the database came back, want none", lost)
	}
}
