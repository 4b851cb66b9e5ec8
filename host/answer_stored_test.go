package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// A create and an observe that moves the revision hand the store the
// bytes they answer (repo decision 0065): the store's exact read returns
// exactly the mutation's resource body as stored bytes, not the row for
// the host to encode, and a read answers them.
func TestMutationsStoreTheirAnswer(t *testing.T) {
	var applied, read []byte
	h := hosttest.Start(t, hosttest.Options{
		Probe: true,
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				switch {
				case r.Method == http.MethodPut && (rec.Code == http.StatusOK || rec.Code == http.StatusCreated):
					applied = rec.Body.Bytes()
				case r.Method == http.MethodGet && rec.Code == http.StatusOK:
					read = rec.Body.Bytes()
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
	req := kvRequest(t, c, "stored")
	k := store.Key{Tenant: "tenant-a", Space: req.Metadata.Space, APIVersion: req.APIVersion, Kind: req.Kind, Name: req.Metadata.Name}
	addr := client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: req.Metadata.Name}
	check := func(when string) {
		t.Helper()
		a, err := h.Store.(store.ExactReader).ExactAnswer(ctx, k, req.Form.FormRef)
		if err != nil {
			t.Fatal(err)
		}
		if a.Body == nil || string(a.Body) != string(applied) {
			t.Errorf("%s: the store holds the answer %q (none stored: %v), want the mutation's body %s", when, a.Body, a.Resource != nil, applied)
		}
		if _, err := c.Read(ctx, addr); err != nil {
			t.Fatal(err)
		}
		if string(read) != string(applied) {
			t.Errorf("%s: a read answers %s, want the mutation's body %s", when, read, applied)
		}
	}
	res, err := prepareApply(ctx, c, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("after a create")
	// The probe's touch-status (an observe's commit) moves the revision.
	q := "?" + url.Values{"space": {res.Metadata.Space}, "group": {res.Form.FormRef.APIVersion}, "kind": {res.Kind},
		"definitionVersion": {res.Form.FormRef.DefinitionVersion}, "schemaDigest": {res.Form.FormRef.SchemaDigest}}.Encode()
	o := probeDo(t, h, http.MethodPost, "/resources/"+res.Form.FormRef.APIVersion+"/"+res.Kind+"/"+res.Metadata.Name+"/observe"+q, hosttest.TokenA1,
		map[string]string{wire.HeaderProbe: "touch-status", wire.HeaderIdempotency: "touch-1", wire.HeaderGeneration: res.Metadata.Generation}, nil)
	var env struct{ Resource json.RawMessage }
	if err := json.Unmarshal(o.body, &env); err != nil || o.status != 200 {
		t.Fatalf("observe: HTTP %d %s", o.status, o.body)
	}
	applied = env.Resource
	check("after an observe that moved the revision")
}
