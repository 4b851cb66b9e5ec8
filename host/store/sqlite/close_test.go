package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// TestCloseDuringExactReads: Close while exact reads run on every reader
// waits for them; each read either answers the resource or fails with
// ErrClosed, none panics on a statement Close ended, and Close reports no
// error.
func TestCloseDuringExactReads(t *testing.T) {
	ref := form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1", Kind: "EdgeKVNamespace", DefinitionVersion: "1.0.0", SchemaDigest: "sha256:" + fmt.Sprintf("%064d", 0)}
	key := store.Key{Tenant: "acme", Space: "prod", APIVersion: ref.APIVersion, Kind: ref.Kind, Name: "sessions"}
	for round := range 20 {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if err := s.Update(context.Background(), func(tx store.Tx) error {
			return tx.CreateResource(&store.Resource{Key: key, UID: "uid-1", FormRef: ref, Generation: 1, Revision: 1,
				Spec: []byte(`{}`), SpecDigest: ref.SchemaDigest, Status: []byte(`{}`), CreatedAt: now, UpdatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if p := recover(); p != nil {
						errs <- fmt.Errorf("an exact read panicked: %v", p)
					}
				}()
				for {
					r, err := s.ExactAnswer(context.Background(), key, ref)
					switch {
					case errors.Is(err, ErrClosed):
						return
					case err != nil:
						errs <- fmt.Errorf("an exact read during Close: %v (want the resource or ErrClosed)", err)
						return
					case r.UID != "uid-1":
						errs <- fmt.Errorf("an exact read during Close answered uid %q", r.UID)
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		if err := s.Close(); err != nil {
			t.Errorf("round %d: Close: %v", round, err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
