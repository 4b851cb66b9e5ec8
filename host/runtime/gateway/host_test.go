package gateway_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/hosttest"
)

// Resources made and deleted through the Host API: the gateway serves
// their data while they live; deleting the EdgeKVNamespace deletes its
// entries with it, and the host's sweep (Config.DataSweep) removes the
// SQLiteDatabase's file.
func TestDataOfResourcesDeletedThroughTheHostAPI(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	var gw *gateway.Gateway
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) {
		gw = gateway.New(c.Store, dataDir, nil)
		c.DataSweep = gw.Sweep
	}})
	t.Cleanup(func() { _ = gw.Close() })
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := e.Create(ctx, e.A1, gateway.KindKV, e.Name("cache"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := e.Create(ctx, e.A1, gateway.KindSQL, e.Name("db"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.ForTenant("tenant-a"))
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv}
	if a := f.do(t, "PUT", kvPath("k"), check11, nil, ns.Metadata.UID); a.status != 204 {
		t.Fatalf("put: %d %s", a.status, a.body)
	}
	if a := f.sqlCall(t, "execute", db.Metadata.UID, map[string]any{"sql": "CREATE TABLE t (x)"}); a.status != 200 {
		t.Fatalf("create table: %d %s", a.status, a.body)
	}
	other := &fixture{srv: httptest.NewServer(gw.ForTenant("tenant-b"))}
	t.Cleanup(other.srv.Close)
	if a := other.do(t, "GET", kvPath("k"), nil, nil, ns.Metadata.UID); a.status != 403 {
		t.Errorf("tenant-b's socket reading tenant-a's namespace: %d %s", a.status, a.body)
	}
	path := gateway.SQLitePath(dataDir, db.Metadata.UID)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}

	if err := e.Delete(ctx, e.A1, ns); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(ctx, e.A1, db); err != nil {
		t.Fatal(err)
	}
	err = h.Store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.KVGet(ns.Metadata.UID, "k", time.Now()); err == nil {
			t.Error("the deleted namespace's entry is still stored")
		}
		u, err := tx.Usage("tenant-a")
		if err == nil && u.KVBytes != 0 {
			t.Errorf("tenant-a still uses %d KV bytes", u.KVBytes)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	swept, err := h.Server.Sweep(ctx)
	if err != nil || swept.Data["sql_databases"] != 1 {
		t.Errorf("Sweep: %+v %v; want one SQLite database removed", swept, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the deleted database's file: %v; want it gone", err)
	}
}
