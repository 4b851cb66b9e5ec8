package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// A store without the exact-read fast path (store.ExactReader) is read
// through View: a read answers the ETag and body the store's own exact
// read gives (store.Answer), a prepare of an update binds the stored
// generation, and a free name is not found.
func TestReadWithoutExactReader(t *testing.T) {
	var etag string
	var body []byte
	h := hosttest.Start(t, hosttest.Options{
		Configure: func(c *host.Config) { c.Store = struct{ store.Store }{c.Store} }, // View and Update only
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if r.Method == http.MethodGet && rec.Code == http.StatusOK {
					etag, body = rec.Header().Get("Etag"), rec.Body.Bytes()
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
			})
		},
	})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, c, "viewed")
	res, err := prepareApply(ctx, c, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: req.Metadata.Name}
	if _, err := c.Read(ctx, addr); err != nil {
		t.Fatal(err)
	}
	k := store.Key{Tenant: "tenant-a", Space: req.Metadata.Space, APIVersion: req.APIVersion, Kind: req.Kind, Name: req.Metadata.Name}
	want, err := h.Store.(store.ExactReader).ExactAnswer(ctx, k, req.Form.FormRef)
	if err != nil {
		t.Fatal(err)
	}
	if etag != `"`+res.Metadata.Revision+`"` || string(body) != string(want.Body) {
		t.Errorf("read through View: ETag %s body %s\nthe store's exact read: revision %d body %s", etag, body, want.Revision, want.Body)
	}
	if _, err := c.Prepare(ctx, req, res.Metadata.Generation); err != nil {
		t.Errorf("prepare of an update at the stored generation: %v", err)
	}
	var we *wire.Error
	if _, err := c.Prepare(ctx, req, "7"); !errors.As(err, &we) || we.Code != wire.GenerationConflict {
		t.Errorf("prepare of an update at another generation: %v, want %s", err, wire.GenerationConflict)
	}
	free := addr
	free.Name = "free"
	if _, err := c.Read(ctx, free); !errors.As(err, &we) || we.Code != wire.ResourceNotFound {
		t.Errorf("read of a free name: %v, want %s", err, wire.ResourceNotFound)
	}
}
