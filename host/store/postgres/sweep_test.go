package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// A sweep running while a transaction has read a manifest (about to
// reference it) skips that manifest, and once the reference commits the
// manifest is kept for good: a sweep never deletes an artifact another
// replica is referencing (store.Maintenance, repo decision 0011).
func TestSweepSkipsAnArtifactInUse(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	const d = "sha256:" + "ab00000000000000000000000000000000000000000000000000000000000000"
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutManifest(d, []byte(`{}`)) }); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour) // every stored artifact is old enough
	read, referenced := make(chan struct{}), make(chan struct{})
	var release sync.Once
	let := func() { release.Do(func() { close(referenced) }) }
	defer let() // a failing check below must not leave the user's transaction open
	user := make(chan error, 1)
	go func() {
		user <- s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.Manifest(d); err != nil {
				return err
			}
			close(read)
			<-referenced
			return tx.ReplaceArtifactRefs(store.ResourceHolder("u-1"), []string{d})
		})
	}()
	<-read
	var swept int
	if err := s.Update(t.Context(), func(tx store.Tx) (err error) {
		swept, err = tx.SweepArtifacts(future, 10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if swept != 0 {
		t.Fatalf("the sweep deleted %d artifacts while a transaction was using the manifest", swept)
	}
	let()
	if err := <-user; err != nil {
		t.Fatal(err)
	}
	if err := s.Update(t.Context(), func(tx store.Tx) (err error) {
		swept, err = tx.SweepArtifacts(future, 10)
		return err
	}); err != nil || swept != 0 {
		t.Fatalf("sweep after the reference: %d deleted, %v; want 0", swept, err)
	}
	if err := s.View(t.Context(), func(tx store.Tx) error { _, err := tx.Manifest(d); return err }); err != nil {
		t.Fatalf("the referenced manifest is gone: %v", err)
	}
}
