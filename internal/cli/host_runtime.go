package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/gateway"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/host/runtime/loader"
	"github.com/takoform/takoform/host/runtime/projection"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/storeurl"
)

// DefaultIngress is where the ingress listens when the host serves the
// embedded default (a SQLite file) and --ingress is not given.
const DefaultIngress = "127.0.0.1:8788"

// runtimeFlags are the data plane's flags of `host serve`.
type runtimeFlags struct {
	fl                           *pflag.FlagSet
	gateway                      *gateway.Gateway // set by startRuntime when it serves bindings
	workerd, ingress, runtimeDir string
	ingressCert, ingressKey      string
	devCA                        bool
	devCADir                     string
	workerData, customDomains    string
	events                       string
	testListen                   string
	loaderListen, loaderToken    string
	secretsKey                   string
	secretsKeyPrevious           string
	peerURL                      string
	// peer is this replica's peer URL and the client of its forwarded
	// calls (serve sets it before startRuntime on PostgreSQL).
	peer struct {
		url    string
		client *http.Client
	}
	shardCPU       float64
	shardMemoryMiB int64
	shardUIDBase   uint32
	// bin is the workerd binary startRuntime found, "" for none.
	bin string
}

func (f *runtimeFlags) register(fl *pflag.FlagSet) {
	f.fl = fl
	fl.StringVar(&f.ingressCert, "ingress-tls-cert", "", "serve the worker ingress over TLS with this PEM certificate chain (default: --tls-cert's); re-read on SIGHUP")
	fl.StringVar(&f.ingressKey, "ingress-tls-key", "", "the PEM private key of --ingress-tls-cert; re-read on SIGHUP")
	fl.BoolVar(&f.devCA, "ingress-dev-ca", false, "serve https on the ingress for localhost names with certificates from the host's dev CA, made once in --ingress-dev-ca-dir (default: on for a loopback ingress with a SQLite data file)")
	fl.StringVar(&f.devCADir, "ingress-dev-ca-dir", "", "directory of the ingress dev CA's certificate and 0600 key (default FILE.devca beside a SQLite data file)")
	fl.StringVar(&f.workerd, "workerd", "", "the workerd binary that runs deployed workers (default: $"+engine.EnvBinary+", tools/ of scripts/workerd.sh, then workerd on PATH); without one the host serves its control plane only")
	fl.StringVar(&f.ingress, "ingress", "", "address the worker ingress listens on (plain HTTP; routes endpoint hostnames to workers); default "+DefaultIngress+" with a SQLite data file; with PostgreSQL none unless given, and each replica serving one answers for every worker; \"off\" disables it")
	fl.Float64Var(&f.shardCPU, "shard-cpu", 1, "CPU ceiling of each tenant's workerd process, in cores (cgroup v1 cpu quota, where the host may create cgroups; 0: none)")
	fl.Int64Var(&f.shardMemoryMiB, "shard-memory-mib", 1024, "memory ceiling of each tenant's workerd process, in MiB (cgroup v1 memory limit, where the host may create cgroups; 0: none); past it the process is killed and restarted")
	fl.Uint32Var(&f.shardUIDBase, "shard-uid-base", runtime.DefaultShardUIDs(), "when the host runs as root, the Nth tenant's workerd runs as uid and gid BASE+N (0: every shard as the host's user); needs the workerd binary and --runtime-dir reachable by other users")
	fl.StringVar(&f.testListen, "runtime-test-listen", "", "ADDR=HOSTNAME: with --conformance-probe only, a plain-HTTP listener on the loopback ADDR that routes every request as HOSTNAME (for runtime runners that accept only a loopback IP)")
	fl.StringVar(&f.loaderListen, "runtime-loader-listen", "", "LOOPBACK-IP:PORT: with --conformance-probe only, serve the loader adapter takoform.runtime-abi-loader@v1 there (POST a bundle, get its exported handlers or load refusal from workerd); needs workerd")
	fl.StringVar(&f.loaderToken, "runtime-loader-token-file", "", "with --runtime-loader-listen: a file holding the bearer token every load request must carry (default: none required)")
	fl.StringVar(&f.workerData, "worker-data", "", "directory for the workers' SQLite databases and object bodies, created 0700 (default: FILE.workers beside a SQLite data file; with PostgreSQL not needed: object bodies and SQLite databases live in the database, and a replica keeps its copies of the databases it owns in a temporary directory, or here under sql-copies/)")
	fl.StringVar(&f.peerURL, "peer-url", "", "with PostgreSQL: the scheme, host and port the other replicas reach this one's API listener at, to forward SQLiteDatabase calls to the replica that owns the database (default: the --listen address, this machine's host name when it listens on every address, with the API's scheme)")
	fl.StringVar(&f.customDomains, "custom-domains", "", "file granting custom hostnames to tenants, one \"TENANT HOSTNAME\" or \"TENANT *.SUFFIX\" a line: the proof of ownership a WorkerCustomDomain outside .localhost needs before the ingress routes it (read at start)")
	fl.StringVar(&f.secretsKey, "secrets-key", "", "file of the 32-byte key sealing workers' sensitive values (default: FILE.secrets-key beside a SQLite data file, created 0600 on first start; with PostgreSQL none, and sensitive values are off until every replica gets the same file); back it up apart from the data")
	fl.StringVar(&f.secretsKeyPrevious, "secrets-key-previous", "", "during a key rotation, the retired key file: values it sealed still open until takoform host secrets rekey reseals them")
	fl.StringVar(&f.events, "events", "", "\"on\" or \"off\": run the dispatcher that fires cron triggers and delivers queue batches (default on; replicas sharing a store take turns under the store's events lease, off keeps this one out); needs workerd")
	fl.StringVar(&f.runtimeDir, "runtime-dir", "", "directory for the workers' engine configs and sockets, created 0700 (default: a fresh temporary directory)")
}

// ingressAddr is the address the ingress listens on, "" for none.
func (f *runtimeFlags) ingressAddr(data string) string {
	switch f.ingress {
	case "off":
		return ""
	case "":
		if kind, _, err := storeurl.Parse(data); err == nil && kind == storeurl.SQLite {
			return DefaultIngress
		}
		return ""
	}
	return f.ingress
}

// eventsOn says whether this host runs the events dispatcher (cron and
// queue consumers, spec/runtime-v1.md §2.5, §2.6): --events, else on,
// with either store: replicas sharing one dispatch in turn, under the
// store's events lease with a fencing epoch (spec/runtime-v1.md §10.5;
// repo decision 0062).
func (f *runtimeFlags) eventsOn(data string) (bool, error) {
	switch f.events {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "":
		return true, nil
	}
	return false, usage("--events is \"on\" or \"off\", not %q", f.events)
}

// workerDataDir is where the gateway keeps the workers' SQL files and
// object bodies: --worker-data, else FILE.workers beside a SQLite data
// file, else "" (with PostgreSQL the gateway then keeps object bodies in
// the database and serves no SQL: repo decision 0061).
func (f *runtimeFlags) workerDataDir(data string) string {
	if f.workerData != "" {
		return f.workerData
	}
	if kind, path, err := storeurl.Parse(data); err == nil && kind == storeurl.SQLite {
		return path + ".workers"
	}
	return ""
}

// startRuntime starts the data plane over st and wires it into cfg: the
// reconcile hook, /readyz's detail, the engine load check of WorkerVersion
// apply, import and 202 commit (spec/runtime-v1.md §1.4) when there is an
// engine, and — with a worker data directory or on PostgreSQL —
// the binding gateway (spec/runtime-v1.md §5), its sweep and the
// migrations of SQLiteMigrationApplication commits (§9.3). Without workerd it still starts
// (every ingress answer then says workers do not run) and returns the
// notice to print at start.
func (f *runtimeFlags) startRuntime(st store.Store, data string, cfg *host.Config, strict bool, log *slog.Logger) (*runtime.Runtime, func(), string, error) {
	bin, source, err := engine.Find(f.workerd)
	noEngine, notice := "", ""
	switch {
	case errors.Is(err, engine.ErrNotFound):
		noEngine = err.Error()
		notice = fmt.Sprintf("workers do not run on this host: %v", err)
		log.Warn("workers do not run on this host", "reason", err)
	case err != nil:
		return nil, nil, "", usage("%v", err)
	default:
		log.Info("workers run on workerd", "workerd", bin, "from", source, "compatibilityDate", engine.CompatibilityDate)
	}
	if f.shardCPU < 0 || f.shardMemoryMiB < 0 {
		return nil, nil, "", usage("--shard-cpu and --shard-memory-mib cannot be negative (0 sets no limit)")
	}
	keys, noKeys, err := f.secretKeys(data, strict, log)
	if err != nil {
		return nil, nil, "", err
	}
	fam, ok := cfg.Family.(*edgehost.Family)
	if !ok {
		fam = edgehost.New()
	}
	rc := runtime.Config{Store: st, Binary: bin, NoEngine: noEngine, Dir: f.runtimeDir, Hostname: fam.EndpointHostname, Logger: log, Secrets: keys,
		Limits: engine.Limits{CPUMillicores: int64(f.shardCPU * 1000), MemoryBytes: f.shardMemoryMiB << 20}, ShardUIDBase: f.shardUIDBase}
	if f.customDomains != "" {
		b, err := os.ReadFile(f.customDomains)
		if err != nil {
			return nil, nil, "", usage("--custom-domains: %v", err)
		}
		if rc.Domains, err = runtime.ParseDomains(bytes.NewReader(b)); err != nil {
			return nil, nil, "", usage("--custom-domains %s: %v", f.customDomains, err)
		}
	}
	closeGateway := func() {}
	var gwOpts []gateway.Option
	shared := false
	removeCopies := func() {}
	if kind, _, err := storeurl.Parse(data); err == nil && kind != storeurl.SQLite {
		// Replicas share the store: KV, queue and object data are served
		// from it by every replica, and each SQLite database by the
		// replica that owns it, from the pages the store holds
		// (spec/runtime-v1.md §10.5; repo decisions 0061, 0063).
		shared = true
		copies := ""
		if f.workerData != "" {
			copies = filepath.Join(f.workerData, "sql-copies")
		} else {
			if copies, err = os.MkdirTemp("", "takoform-sql-copies-"); err != nil {
				return nil, nil, "", err
			}
			removeCopies = func() { _ = os.RemoveAll(copies) }
		}
		gwOpts = append(gwOpts, gateway.WithSQLOwnership(gateway.SQLOwnership{Holder: f.peer.url, Dir: copies, Client: f.peer.client}))
	}
	if dir := f.workerDataDir(data); dir != "" || shared {
		gw := gateway.New(st, dir, log, gwOpts...)
		f.gateway = gw
		rc.Gateway, rc.Projections, cfg.DataSweep = gw, projection.Modules(), gw.Sweep
		// SQLiteMigrationApplication commits run their files on the
		// database's own file (spec/runtime-v1.md §9.3).
		cfg.Migrations = gw.ApplyMigrations
		closeGateway = func() {
			if err := gw.Close(); err != nil {
				log.Warn("closing the binding gateway", "err", err)
			}
			removeCopies()
		}
		if shared {
			log.Info("worker bindings served from the shared store by every replica; each SQLite database by the replica that owns it", "peerURL", f.peer.url)
		} else {
			log.Info("worker bindings served from the host's store", "workerData", dir)
		}
	}
	// Replicas sharing the store hear each other's changes at once
	// (store.Peers: NOTIFY and LISTEN on PostgreSQL; repo decision 0061).
	peers, announce := st.(store.Peers)
	peerCtx, stopPeers := context.WithCancel(context.Background())
	if announce {
		// One announcer: a burst of changes is one announcement or two.
		pending := make(chan struct{}, 1)
		rc.Announce = func() {
			select {
			case pending <- struct{}{}:
			default:
			}
		}
		go func() {
			for {
				select {
				case <-peerCtx.Done():
					return
				case <-pending:
				}
				if err := peers.Announce(peerCtx, runtime.PeerChannel); err != nil && peerCtx.Err() == nil {
					log.Warn("runtime: the other replicas were not told of a change (they see it at their next periodic reconcile)", "err", err)
				}
			}
		}()
	}
	rt, err := runtime.New(rc)
	if err != nil {
		stopPeers()
		closeGateway()
		return nil, nil, "", err
	}
	if announce {
		go func() {
			if err := peers.Listen(peerCtx, runtime.PeerChannel, rt.Refresh); err != nil && peerCtx.Err() == nil {
				log.Warn("runtime: no longer hearing the other replicas' changes (they reach this one at its periodic reconcile)", "err", err)
			}
		}()
	}
	closeGW := closeGateway
	closeGateway = func() { stopPeers(); closeGW() }
	cfg.Committed, cfg.DataPlane, cfg.Tail = rt.Notify, rt.State, host.TailOf(rt)
	if bin != "" {
		cfg.LoadCheck = runtime.LoadCheck(bin, log)
	}
	f.bin = bin
	cfg.Secrets = &secrets.Service{Store: st, Keys: keys, NoKeys: noKeys, Notify: rt.Notify}
	return rt, closeGateway, notice, nil
}

// serveIngress starts the ingress on addr in the background; a failure to
// bind is logged and printed and never stops the control plane. The
// returned function stops it.
//
// With TLS (tc, ingressTLS) a loopback ingress answers both http:// and
// https:// on its one port (splitListener); any other serves TLS only.
func serveIngress(ctx context.Context, addr string, rt *runtime.Runtime, m *ingress.Metrics, tc *tls.Config, out io.Writer, log *slog.Logger) func() {
	if addr == "" {
		return func() {}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(out, "worker ingress not serving: %v (the control plane serves on)\n", err)
		log.Error("worker ingress not serving; the control plane serves on", "ingress", addr, "err", err)
		return func() {}
	}
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelDebug) // TLS handshakes refused for names without a certificate
	serve := func(hs *http.Server, l net.Listener) {
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			log.Error("worker ingress stopped", "err", err)
		}
	}
	var servers []*http.Server
	switch {
	case tc == nil:
		hs := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Scheme: "http", Metrics: m}, ReadHeaderTimeout: 30 * time.Second}
		servers = append(servers, hs)
		go serve(hs, ln)
		fmt.Fprintf(out, "worker ingress on http://%s (requests routed by Host: an endpoint hostname)\n", ln.Addr())
	case isLoopback(ln.Addr()):
		split := newSplitListener(ln)
		plain := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Scheme: "http", Metrics: m}, ReadHeaderTimeout: 30 * time.Second}
		secure := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Metrics: m}, ReadHeaderTimeout: 30 * time.Second, TLSConfig: tc, ErrorLog: errLog}
		servers = append(servers, plain, secure)
		go serve(plain, split.plain)
		go serve(secure, tls.NewListener(split.tls, tc))
		fmt.Fprintf(out, "worker ingress on http://%s and https://%s (requests routed by Host: an endpoint hostname)\n", ln.Addr(), ln.Addr())
	default:
		hs := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Metrics: m}, ReadHeaderTimeout: 30 * time.Second, TLSConfig: tc, ErrorLog: errLog}
		servers = append(servers, hs)
		go serve(hs, tls.NewListener(ln, tc))
		fmt.Fprintf(out, "worker ingress on https://%s (requests routed by Host: an endpoint hostname)\n", ln.Addr())
	}
	log.Info("worker ingress listening", "ingress", ln.Addr().String(), "tls", tc != nil)
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, hs := range servers {
			if err := hs.Shutdown(shut); err != nil {
				log.Warn("worker ingress shutdown", "err", err)
			}
		}
	}
}

// testListener parses --runtime-test-listen (spec/runtime-v1.md §10.1):
// only with --conformance-probe, ADDR a loopback IP and port, HOSTNAME a
// hostname; "" when the flag is unset.
func (f *runtimeFlags) testListener(probe bool) (addr, hostname string, err error) {
	if f.testListen == "" {
		return "", "", nil
	}
	if !probe {
		return "", "", usage("--runtime-test-listen is test-only: it needs --conformance-probe")
	}
	addr, name, ok := strings.Cut(f.testListen, "=")
	host, _, splitErr := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	if !ok || splitErr != nil || ip == nil || !ip.IsLoopback() {
		return "", "", usage("--runtime-test-listen %q: want LOOPBACK-IP:PORT=HOSTNAME, e.g. 127.0.0.1:8790=ep-0123456789abcdef.workers.takoform.localhost", f.testListen)
	}
	canonical, err := edge.CanonicalHostname(name)
	if err != nil {
		return "", "", usage("--runtime-test-listen %q: %v", f.testListen, err)
	}
	return addr, canonical, nil
}

// serveTestListener serves the runtime test listener; its failure to bind
// stops the host (it was asked for by a test).
func serveTestListener(ctx context.Context, addr, hostname string, rt *runtime.Runtime, m *ingress.Metrics, out io.Writer, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--runtime-test-listen: %w", err)
	}
	hs := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Scheme: "http", Hostname: hostname, Metrics: m}, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("runtime test listener stopped", "err", err)
		}
	}()
	fmt.Fprintf(out, "runtime test listener on http://%s routes every request as %s\n", ln.Addr(), hostname)
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil {
			log.Warn("runtime test listener shutdown", "err", err)
		}
	}, nil
}

// loaderListener parses --runtime-loader-listen and
// --runtime-loader-token-file (spec/runtime-v1.md §7.1): only with
// --conformance-probe, on a loopback IP and port; "" when unset.
func (f *runtimeFlags) loaderListener(probe bool) (addr, token string, err error) {
	if f.loaderListen == "" {
		if f.loaderToken != "" {
			return "", "", usage("--runtime-loader-token-file needs --runtime-loader-listen")
		}
		return "", "", nil
	}
	if !probe {
		return "", "", usage("--runtime-loader-listen is test-only: it needs --conformance-probe")
	}
	host, _, splitErr := net.SplitHostPort(f.loaderListen)
	if ip := net.ParseIP(host); splitErr != nil || ip == nil || !ip.IsLoopback() {
		return "", "", usage("--runtime-loader-listen %q: want LOOPBACK-IP:PORT, e.g. 127.0.0.1:8791 (the loader adapter never listens off loopback)", f.loaderListen)
	}
	if f.loaderToken != "" {
		b, err := os.ReadFile(f.loaderToken)
		if err != nil {
			return "", "", usage("--runtime-loader-token-file: %v", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return "", "", usage("--runtime-loader-token-file %s is empty; put the token in it, or drop the flag to require none", f.loaderToken)
		}
	}
	return f.loaderListen, token, nil
}

// serveLoader serves the loader adapter on addr with the engine
// startRuntime found; no engine, or failing to bind, stops the host (a
// test asked for it).
func serveLoader(ctx context.Context, addr, bin, token string, out io.Writer, log *slog.Logger) (func(), error) {
	if bin == "" {
		return nil, usage("--runtime-loader-listen needs workerd: the loader adapter loads on the engine (install it with scripts/workerd.sh or name it with --workerd)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--runtime-loader-listen: %w", err)
	}
	hs := &http.Server{Handler: loader.New(bin, token, log), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("loader adapter stopped", "err", err)
		}
	}()
	fmt.Fprintf(out, "loader adapter %s on http://%s/\n", loader.Protocol, ln.Addr())
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil {
			log.Warn("loader adapter shutdown", "err", err)
		}
	}, nil
}

// eventsHolder names this replica in the events lease (repo decision
// 0062): its host name and the address its API listens on, so replicas on
// one machine are distinct holders and a replica restarted on the same
// address takes its lease back at once.
func eventsHolder(addr net.Addr) string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "host"
	}
	return h + " " + addr.String()
}
