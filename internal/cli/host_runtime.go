package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	workerd, ingress, runtimeDir string
	workerData                   string
	testListen                   string
	secretsKey                   string
	secretsKeyPrevious           string
	shardCPU                     float64
	shardMemoryMiB               int64
}

func (f *runtimeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.workerd, "workerd", "", "the workerd binary that runs deployed workers (default: $"+engine.EnvBinary+", tools/ of scripts/workerd.sh, then workerd on PATH); without one the host serves its control plane only")
	fl.StringVar(&f.ingress, "ingress", "", "address the worker ingress listens on (plain HTTP; routes endpoint hostnames to workers); default "+DefaultIngress+" with a SQLite data file, none with PostgreSQL; \"off\" disables it")
	fl.Float64Var(&f.shardCPU, "shard-cpu", 1, "CPU ceiling of each tenant's workerd process, in cores (cgroup v1 cpu quota, where the host may create cgroups; 0: none)")
	fl.Int64Var(&f.shardMemoryMiB, "shard-memory-mib", 1024, "memory ceiling of each tenant's workerd process, in MiB (cgroup v1 memory limit, where the host may create cgroups; 0: none); past it the process is killed and restarted")
	fl.StringVar(&f.testListen, "runtime-test-listen", "", "ADDR=HOSTNAME: with --conformance-probe only, a plain-HTTP listener on the loopback ADDR that routes every request as HOSTNAME (for runtime runners that accept only a loopback IP)")
	fl.StringVar(&f.workerData, "worker-data", "", "directory for the workers' SQLite databases and object bodies, created 0700 (default: FILE.workers beside a SQLite data file; with PostgreSQL none, and workers with bindings do not run until it is given)")
	fl.StringVar(&f.secretsKey, "secrets-key", "", "file of the 32-byte key sealing workers' sensitive values (default: FILE.secrets-key beside a SQLite data file, created 0600 on first start; with PostgreSQL none, and sensitive values are off until every replica gets the same file); back it up apart from the data")
	fl.StringVar(&f.secretsKeyPrevious, "secrets-key-previous", "", "during a key rotation, the retired key file: values it sealed still open until takoform host secrets rekey reseals them")
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

// workerDataDir is where the gateway keeps the workers' SQL files and
// object bodies: --worker-data, else FILE.workers beside a SQLite data
// file, else "" (no gateway: versions with bindings are not runnable).
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
// reconcile hook, /readyz's detail, and — with a worker data directory —
// the binding gateway (spec/runtime-v1.md §5) and its sweep. Without workerd it still starts
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
		Limits: engine.Limits{CPUMillicores: int64(f.shardCPU * 1000), MemoryBytes: f.shardMemoryMiB << 20}}
	closeGateway := func() {}
	if dir := f.workerDataDir(data); dir != "" {
		gw := gateway.New(st, dir, log)
		rc.Gateway, rc.Projections, cfg.DataSweep = gw, projection.Modules(), gw.Sweep
		closeGateway = func() {
			if err := gw.Close(); err != nil {
				log.Warn("closing the binding gateway", "err", err)
			}
		}
		log.Info("worker bindings served from the host's store", "workerData", dir)
	} else {
		log.Warn("workers with bindings do not run: no --worker-data directory (needed with PostgreSQL)")
	}
	rt, err := runtime.New(rc)
	if err != nil {
		closeGateway()
		return nil, nil, "", err
	}
	cfg.Committed, cfg.DataPlane = rt.Notify, rt.State
	cfg.Secrets = &secrets.Service{Store: st, Keys: keys, NoKeys: noKeys, Notify: rt.Notify}
	return rt, closeGateway, notice, nil
}

// serveIngress starts the ingress on addr in the background; a failure to
// bind is logged and printed and never stops the control plane. The
// returned function stops it.
func serveIngress(ctx context.Context, addr string, rt *runtime.Runtime, out io.Writer, log *slog.Logger) func() {
	if addr == "" {
		return func() {}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(out, "worker ingress not serving: %v (the control plane serves on)\n", err)
		log.Error("worker ingress not serving; the control plane serves on", "ingress", addr, "err", err)
		return func() {}
	}
	hs := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Scheme: "http"}, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("worker ingress stopped", "err", err)
		}
	}()
	fmt.Fprintf(out, "worker ingress on http://%s (requests routed by Host: an endpoint hostname)\n", ln.Addr())
	log.Info("worker ingress listening", "ingress", ln.Addr().String())
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil {
			log.Warn("worker ingress shutdown", "err", err)
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
func serveTestListener(ctx context.Context, addr, hostname string, rt *runtime.Runtime, out io.Writer, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--runtime-test-listen: %w", err)
	}
	hs := &http.Server{Handler: &ingress.Handler{Routes: rt, Log: log, Scheme: "http", Hostname: hostname}, ReadHeaderTimeout: 30 * time.Second}
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
