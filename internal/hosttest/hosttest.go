// Package hosttest starts a real Takoform host in-process for tests: a
// real SQLite file in a temporary directory (or a real PostgreSQL
// database, Options.Data), real HTTP on a loopback port,
// and three credentials (two principals of one tenant, one of another),
// the shape conformance checks need.
package hosttest

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/events"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/runtime/projection"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/host/store/storeurl"
)

// Tokens of the three test credentials.
const (
	TokenA1 = "token-tenant-a-principal-1"
	TokenA2 = "token-tenant-a-principal-2"
	TokenB  = "token-tenant-b-principal-1"
)

// Host is a running test host.
type Host struct {
	URL    string
	Path   string // the SQLite file ("" on PostgreSQL)
	Server *host.Server
	Store  store.Store
	// Runtime is the data plane (Options.Workerd), nil without one.
	Runtime *runtime.Runtime
	// Gateway is the data plane's binding gateway (a workerd binary in
	// Options.Workerd), nil without one.
	Gateway *gateway.Gateway
	// Events is the events dispatcher (a workerd binary in
	// Options.Workerd), nil without one.
	Events *events.Dispatcher
	http   *httptest.Server
}

// Options adjust the host; zero values take host defaults and the
// built-in Edge family (both editions, host.BuiltinFamilies).
type Options struct {
	Catalog *form.Catalog
	// Lanes, when set, is each lane's installed set (host.LoadFamilies);
	// without it the host places Catalog as one family (host.SplitLanes).
	Lanes  host.LaneSets
	Family host.Family
	Path   string // reuse a data file (restart tests)
	// Data, when set, is a data location as `host serve --data` takes it
	// (storeurl): a postgres:// URL (pgtest.URL) serves from PostgreSQL.
	Data string
	// Listener, when set, is where the host serves (an address known
	// before the host starts); default a fresh loopback port.
	Listener          net.Listener
	Logger            *slog.Logger // the host's log (default discarded)
	SyncBudget        time.Duration
	ProvisioningDelay time.Duration
	Probe             bool
	MaxBodyBytes      int64
	IdempotencyTTL    time.Duration
	Now               func() time.Time // the host's clock (default time.Now)
	// Configure, when set, adjusts the host configuration last (logger,
	// limits, retention, quotas).
	Configure func(*host.Config)
	// Wrap, when set, wraps the host's handler: a test that must show a
	// conformance check fails on a host breaking its rule breaks ours here.
	Wrap func(http.Handler) http.Handler
	// Workerd, when set, runs the data plane beside the host (wired as
	// `host serve` wires it, the engine load check and, with a binary, the
	// migrations of SQLiteMigrationApplication commits included): a workerd
	// binary path (enginetest.Binary), or NoWorkerd for a data plane
	// without an engine (the static check decides). Host.Runtime is then
	// set.
	Workerd string
	// Runtime, when set, adjusts the data plane's configuration last
	// (its binding gateway, projections and secrets keyring: a fresh
	// random key unless Workerd is NoWorkerd).
	Runtime func(*runtime.Config)
	// Events, when set with a workerd binary, adjusts the events
	// dispatcher's configuration last (its clock, its metrics).
	Events func(*events.Config)
}

// NoWorkerd is Options.Workerd for a data plane that runs no workers.
const NoWorkerd = "none"

// Start starts a host and stops it when the test ends.
func Start(t testing.TB, o Options) *Host {
	t.Helper()
	if o.Catalog == nil {
		// The built-in family, both editions, each on its lane.
		cat, lanes, err := host.BuiltinFamilies()
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog = cat
		if o.Lanes == nil {
			o.Lanes = lanes
		}
	}
	if o.Family == nil {
		o.Family = host.DefaultFamily(o.Catalog)
	}
	if o.Path == "" && o.Data == "" {
		o.Path = filepath.Join(t.TempDir(), "host.db")
	}
	ctx := context.Background()
	var st store.Store
	var err error
	if o.Data != "" {
		st, err = storeurl.Open(ctx, o.Data)
	} else {
		st, err = sqlite.Open(ctx, o.Path, sqlite.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := host.Config{
		Store: st, Catalog: o.Catalog, Lanes: o.Lanes, Family: o.Family, Probe: o.Probe,
		SyncBudget: o.SyncBudget, ProvisioningDelay: o.ProvisioningDelay,
		MaxBodyBytes: o.MaxBodyBytes, IdempotencyTTL: o.IdempotencyTTL, Now: o.Now, Logger: o.Logger,
		Tokens: []host.Token{
			{SHA256: host.HashToken(TokenA1), Tenant: "tenant-a", Principal: "principal-1"},
			{SHA256: host.HashToken(TokenA2), Tenant: "tenant-a", Principal: "principal-2"},
			{SHA256: host.HashToken(TokenB), Tenant: "tenant-b", Principal: "principal-1"},
		},
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	var rt *runtime.Runtime
	var gw *gateway.Gateway
	var ev *events.Dispatcher
	if o.Workerd != "" {
		rc := runtime.Config{Store: st, Binary: o.Workerd, Hostname: edgehost.New().EndpointHostname, Logger: cfg.Logger, ShardUIDBase: runtime.DefaultShardUIDs()}
		if fam, ok := cfg.Family.(*edgehost.Family); ok {
			rc.Hostname = fam.EndpointHostname
		}
		if o.Workerd == NoWorkerd {
			rc.Binary, rc.NoEngine = "", "no workerd binary (test host)"
		} else {
			gw = gateway.New(st, t.TempDir(), cfg.Logger)
			t.Cleanup(func() { _ = gw.Close() })
			rc.Gateway, rc.Projections, cfg.DataSweep, cfg.Migrations = gw, projection.Modules(), gw.Sweep, gw.ApplyMigrations
			cfg.LoadCheck = runtime.LoadCheck(o.Workerd, cfg.Logger)
		}
		if o.Workerd != NoWorkerd {
			raw := make([]byte, secrets.KeySize)
			if _, err := rand.Read(raw); err != nil {
				t.Fatal(err)
			}
			keys, err := secrets.NewKeyring(raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			rc.Secrets = keys
		}
		if o.Runtime != nil {
			o.Runtime(&rc)
		}
		if rt, err = runtime.New(rc); err != nil {
			st.Close()
			t.Fatal(err)
		}
		cfg.Committed, cfg.DataPlane, cfg.Tail = rt.Notify, rt.State, host.TailOf(rt)
		cfg.Secrets = &secrets.Service{Store: st, Keys: rc.Secrets, Notify: rt.Notify}
		if o.Workerd != NoWorkerd {
			ec := events.Config{Store: st, Runtime: rt, Logger: cfg.Logger, Metrics: events.NewMetrics()}
			if o.Events != nil {
				o.Events(&ec)
			}
			cfg.Collectors = append(cfg.Collectors, ec.Metrics.Collectors()...) // on the host's /metrics, as host serve has them
			ev = events.Start(ec)
			gw.OnQueueSend(ev.Wake)
		}
	}
	srv, err := host.New(ctx, cfg)
	if err != nil {
		if ev != nil {
			ev.Close()
		}
		if rt != nil {
			rt.Close()
		}
		st.Close()
		t.Fatal(err)
	}
	var handler http.Handler = srv
	if o.Wrap != nil {
		handler = o.Wrap(srv)
	}
	hs := httptest.NewUnstartedServer(handler)
	if o.Listener != nil {
		hs.Listener.Close()
		hs.Listener = o.Listener
	}
	hs.Start()
	h := &Host{URL: hs.URL, Path: o.Path, Server: srv, Store: st, Runtime: rt, Gateway: gw, Events: ev, http: hs}
	t.Cleanup(h.Stop)
	return h
}

// Stop stops the HTTP server, the worker and the store (idempotent).
func (h *Host) Stop() {
	if h.http == nil {
		return
	}
	h.http.Close()
	h.Server.Close()
	if h.Events != nil {
		h.Events.Close()
	}
	if h.Runtime != nil {
		h.Runtime.Close()
	}
	h.Store.Close()
	h.http = nil
}
