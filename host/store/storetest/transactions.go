package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/takoform/takoform/host/store"
)

var errRefused = errors.New("refused by the test")

// An Update whose fn fails writes nothing, whatever fn wrote before.
func testUpdateRollback(t *testing.T, s store.Store) {
	existing := kv("acme", "prod", "existing", "uid-1")
	create(t, s, existing)
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Next("uid"); err != nil {
			return err
		}
		r := kv("acme", "prod", "new", "uid-2")
		wantNoErr(t, "CreateResource", tx.CreateResource(r))
		wantNoErr(t, "ReplacePins", tx.ReplacePins("uid-2", []store.Pin{pin("uid-2", "/kvBindings/0/resource", existing)}))
		wantNoErr(t, "PutIdempotency", tx.PutIdempotency(idem("alice", "prod", "k1", at(0))))
		wantNoErr(t, "PutOperation", tx.PutOperation(op("op_1", r.Key, at(0), at(0))))
		wantNoErr(t, "PutBlob", tx.PutBlob(digestA, []byte("bytes")))
		wantNoErr(t, "Hold", tx.Hold("acme", digestA))
		wantNoErr(t, "PutManifest", tx.PutManifest(digestM, []byte("{}")))
		wantNoErr(t, "PutClaim", tx.PutClaim("acme", "api.example.com", "uid-2"))
		if _, err := tx.PutSetting("prepare-key", []byte("k")); err != nil {
			return err
		}
		existing2 := *existing
		existing2.Revision = 9
		wantNoErr(t, "UpdateResource", tx.UpdateResource(&existing2))
		return errRefused
	})
	wantErr(t, "Update whose fn fails", err, errRefused)

	// A Tx method's own conflict, returned by fn, rolls back fn's earlier writes too.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		wantNoErr(t, "CreateResource", tx.CreateResource(kv("acme", "prod", "third", "uid-3")))
		return tx.CreateResource(kv("acme", "prod", "existing", "uid-4"))
	})
	wantErr(t, "Update whose fn returns a conflict", err, store.ErrConflict)

	err = s.Update(t.Context(), func(tx store.Tx) error {
		wantNoErr(t, "DeleteResource", tx.DeleteResource("uid-1"))
		return errRefused
	})
	wantErr(t, "Update whose fn fails after a delete", err, errRefused)

	view(t, s, func(tx store.Tx) error {
		got, err := tx.ResourceByUID("uid-1")
		wantNoErr(t, "ResourceByUID of the untouched resource", err)
		equal(t, "untouched resource", got, existing)
		for _, uid := range []string{"uid-2", "uid-3", "uid-4"} {
			_, err = tx.ResourceByUID(uid)
			wantErr(t, "ResourceByUID "+uid+" written by a failed Update", err, store.ErrNotFound)
		}
		pins, err := tx.PinsTo("uid-1")
		wantNoErr(t, "PinsTo", err)
		equal(t, "pins written by a failed Update", len(pins), 0)
		_, err = tx.Idempotency(laneA, "acme", "alice", "prod", "k1")
		wantErr(t, "Idempotency", err, store.ErrNotFound)
		_, err = tx.Operation("op_1")
		wantErr(t, "Operation", err, store.ErrNotFound)
		_, err = tx.Blob(digestA)
		wantErr(t, "Blob", err, store.ErrNotFound)
		held, err := tx.Holds("acme", digestA)
		wantNoErr(t, "Holds", err)
		equal(t, "holding written by a failed Update", held, false)
		_, err = tx.Manifest(digestM)
		wantErr(t, "Manifest", err, store.ErrNotFound)
		_, err = tx.Setting("prepare-key")
		wantErr(t, "Setting", err, store.ErrNotFound)
		_, err = tx.ClaimHolder("acme", "api.example.com")
		wantErr(t, "ClaimHolder", err, store.ErrNotFound)
		return nil
	})
}

func testUpdateCanceled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateResource(kv("acme", "prod", "x", "uid-1")) })
	wantErr(t, "Update with a canceled context", err, context.Canceled)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.ResourceByUID("uid-1")
		wantErr(t, "ResourceByUID", err, store.ErrNotFound)
		return nil
	})
}

// 64 concurrent creates, every 7th refused by its fn after writing: each
// caller gets its own answer and exactly the others are stored.
func testConcurrentUpdates(t *testing.T, s store.Store) {
	const callers = 64
	uids := make([]string, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
				n, err := tx.Next("uid")
				if err != nil {
					return err
				}
				uid := fmt.Sprintf("uid-%d", n)
				if err := tx.CreateResource(kv("acme", "prod", fmt.Sprintf("r-%02d", i), uid)); err != nil {
					return err
				}
				if err := tx.PutIdempotency(idem("alice", "prod", fmt.Sprintf("k-%02d", i), at(0))); err != nil {
					return err
				}
				uids[i] = uid
				if i%7 == 0 {
					return fmt.Errorf("caller %02d: %w", i, errRefused)
				}
				return nil
			})
		})
	}
	close(start)
	wg.Wait()
	stored := map[string]bool{}
	view(t, s, func(tx store.Tx) error {
		for i := range callers {
			name := fmt.Sprintf("r-%02d", i)
			got, err := tx.Resource(key("acme", "prod", name))
			_, ierr := tx.Idempotency(laneA, "acme", "alice", "prod", fmt.Sprintf("k-%02d", i))
			if i%7 == 0 {
				wantErr(t, fmt.Sprintf("Update of refused caller %02d", i), errs[i], errRefused)
				if errs[i] != nil && !strings.Contains(errs[i].Error(), fmt.Sprintf("caller %02d:", i)) {
					t.Errorf("caller %02d got another caller's error: %v", i, errs[i])
				}
				wantErr(t, "Resource "+name+" of a refused caller", err, store.ErrNotFound)
				wantErr(t, "Idempotency of a refused caller", ierr, store.ErrNotFound)
				continue
			}
			wantNoErr(t, fmt.Sprintf("Update of caller %02d", i), errs[i])
			wantNoErr(t, "Resource "+name, err)
			wantNoErr(t, "Idempotency of caller "+name, ierr)
			if err != nil {
				continue
			}
			equal(t, "UID of "+name, got.UID, uids[i])
			if stored[got.UID] {
				t.Errorf("UID %s issued twice", got.UID)
			}
			stored[got.UID] = true
		}
		return nil
	})
	equal(t, "resources stored", len(stored), callers-(callers+6)/7)
}

// A View sees what is committed, never an Update still in progress.
func testViewCommittedOnly(t *testing.T, s store.Store) {
	r := kv("acme", "prod", "sessions", "uid-1")
	written, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.CreateResource(r); err != nil {
				return err
			}
			close(written)
			<-release
			return nil
		})
	}()
	<-written
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Resource(r.Key)
		wantErr(t, "Resource written by an uncommitted Update", err, store.ErrNotFound)
		return nil
	})
	close(release)
	wantNoErr(t, "Update", <-done)
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Resource(r.Key)
		wantNoErr(t, "Resource after commit", err)
		equal(t, "committed resource", got, r)
		return nil
	})
	err := s.View(t.Context(), func(store.Tx) error { return errRefused })
	wantErr(t, "View returns fn's error", err, errRefused)
}

func testViewReadOnly(t *testing.T, s store.Store) {
	err := s.View(t.Context(), func(tx store.Tx) error { return tx.CreateResource(kv("acme", "prod", "x", "uid-1")) })
	if err == nil {
		t.Fatal("CreateResource inside View succeeded, want an error")
	}
	view(t, s, func(tx store.Tx) error {
		_, err := tx.ResourceByUID("uid-1")
		wantErr(t, "ResourceByUID of a write inside View", err, store.ErrNotFound)
		return nil
	})
}

// A View whose function panics or whose context ends gives its
// connection back: many more Views than any pool holds still run, and a
// cancelled View fails with the context's error at its next statement.
func testViewReleases(t *testing.T, s store.Store) {
	r := kv("acme", "prod", "sessions", "uid-1")
	update(t, s, func(tx store.Tx) error { return tx.CreateResource(r) })
	for i := range 64 {
		func() {
			defer func() { _ = recover() }()
			_ = s.View(t.Context(), func(tx store.Tx) error {
				if _, err := tx.Resource(r.Key); err != nil {
					return err
				}
				panic(fmt.Sprintf("view %d", i))
			})
		}()
		ctx, cancel := context.WithCancel(t.Context())
		err := s.View(ctx, func(tx store.Tx) error {
			if _, err := tx.Resource(r.Key); err != nil {
				return err
			}
			cancel()
			_, err := tx.Resource(r.Key)
			return err
		})
		wantErr(t, "a statement after the View's context ended", err, context.Canceled)
		wantErr(t, "a View on an ended context", s.View(ctx, func(tx store.Tx) error {
			_, err := tx.Resource(r.Key)
			return err
		}), context.Canceled)
	}
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Resource(r.Key)
		wantNoErr(t, "Resource after the panicking and cancelled Views", err)
		equal(t, "resource", got, r)
		return nil
	})
}
