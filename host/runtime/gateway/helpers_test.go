package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
)

// fixture is a gateway over a real SQLite host store holding, for tenant
// acme: the EdgeKVNamespace uid-kv and the SQLiteDatabase uid-sql; for
// tenant globex: the EdgeKVNamespace uid-kv-globex and the
// SQLiteDatabase uid-sql-globex. srv serves acme's handler.
type fixture struct {
	st      store.Store
	gw      *gateway.Gateway
	srv     *httptest.Server
	dataDir string
	now     time.Time
}

func resource(tenant, kind, name, uid string) *store.Resource {
	return resourceIn(edge.GroupV1alpha1, tenant, kind, name, uid)
}

// resourceIn is a resource of the Edge group.
func resourceIn(group, tenant, kind, name, uid string) *store.Resource {
	ref := form.FormRef{APIVersion: group, Kind: kind, DefinitionVersion: "1.0.0",
		SchemaDigest: "sha256:1111111111111111111111111111111111111111111111111111111111111111"}
	return &store.Resource{
		Key: store.Key{Tenant: tenant, Space: "prod", APIVersion: group, Kind: kind, Name: name},
		UID: uid, FormRef: ref, Generation: 1, Revision: 1, Spec: []byte(`{}`),
		SpecDigest: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		Status:     []byte(`{}`), CreatedAt: time.Unix(1, 0).UTC(), UpdatedAt: time.Unix(1, 0).UTC(),
	}
}

func newFixture(t testing.TB, opts ...gateway.Option) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	err = st.Update(context.Background(), func(tx store.Tx) error {
		for _, r := range []*store.Resource{
			resource("acme", gateway.KindKV, "cache", "uid-kv"),
			resource("acme", gateway.KindSQL, "db", "uid-sql"),
			resource("globex", gateway.KindKV, "cache", "uid-kv-globex"),
			resource("globex", gateway.KindSQL, "db", "uid-sql-globex"),
		} {
			if err := tx.CreateResource(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, dataDir: filepath.Join(dir, "data"), now: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)}
	opts = append([]gateway.Option{gateway.WithClock(func() time.Time { return f.now })}, opts...)
	f.gw = gateway.New(st, f.dataDir, nil, opts...)
	t.Cleanup(func() { _ = f.gw.Close() })
	f.srv = httptest.NewServer(f.gw.ForTenant("acme"))
	t.Cleanup(f.srv.Close)
	return f
}

// answer is one gateway answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// code is the error code of an error answer, "" otherwise.
func (a answer) code() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Error.Code
}

// do sends one request naming uids in the binding header (none when
// empty).
func (f *fixture) do(t testing.TB, method, path string, body []byte, hdr http.Header, uids ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	for _, u := range uids {
		req.Header.Add(gateway.BindingHeader, u)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}
