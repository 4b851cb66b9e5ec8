package replicatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// The data plane's benchmarks on replicas (`make bench-runtime`,
// PERFORMANCE.md): n `host serve` processes on one PostgreSQL, each with
// its own workerd and its own worker ingress (spec/runtime-v1.md §10.5,
// repo decision 0061), the events dispatcher running on the events
// lease's holder only (repo decision 0062). Clients speak to the
// ingresses directly, client g to replica g mod n — the balancing a
// client pool does — so no proxy competes for the machine's cores. Each
// figure is printed beside its floor of the same run, with the load
// average and the CPU each party spent.

// plane is a cluster serving workers, and a Host API environment through
// its proxy.
type plane struct {
	b       *testing.B
	ctx     context.Context
	c       *replicatest.Cluster
	e       *conformance.Env
	ingress []string     // each replica's worker ingress, by index
	hc      *http.Client // keep-alive, room for every client
	cpu     *cpuMeter    // hosts, their workerd, PostgreSQL, this process
}

// requirePlane skips b, saying why, unless workerd and PostgreSQL are at
// hand (`make bench-runtime-replicas` provides both), and returns the
// workerd binary.
func requirePlane(b *testing.B) string {
	bin := enginetest.Binary(b)
	if os.Getenv("REPLICATEST_SQLITE") == "1" {
		b.Skip("the data plane's benchmarks measure PostgreSQL replicas; REPLICATEST_SQLITE=1 runs one SQLite replica")
	}
	if os.Getenv(pgtest.EnvVar) == "" {
		b.Skipf("the data plane's benchmarks need PostgreSQL: %s is unset (make bench-runtime-replicas runs them through scripts/postgres.sh)", pgtest.EnvVar)
	}
	return bin
}

// startPlane starts n replicas on a fresh PostgreSQL database, each with
// real workerd and an ingress on a free loopback port.
func startPlane(b *testing.B, n int) *plane {
	bin := requirePlane(b)
	c := cluster(b, n, replicatest.Options{Args: []string{"--workerd", bin, "--ingress", "127.0.0.1:0"}})
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, c.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		b.Fatal(err)
	}
	p := &plane{b: b, ctx: ctx, c: c, e: e,
		hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients, DisableCompression: true}}}
	for i, r := range c.Replicas {
		u := r.Ingress()
		if u == "" {
			b.Fatalf("replica %d announced no worker ingress:\n%s", i, c.Logs())
		}
		p.ingress = append(p.ingress, u)
	}
	p.cpu = pgMeter(b, nil)
	p.cpu.engines = true
	for _, r := range c.Replicas {
		p.cpu.hosts = append(p.cpu.hosts, r.PID())
	}
	return p
}

func (p *plane) create(kind, prefix string, spec map[string]any) *wire.Resource {
	p.b.Helper()
	r, err := p.e.Create(p.ctx, p.e.A1, kind, p.e.Name(prefix), spec)
	if err != nil {
		p.b.Fatalf("create %s: %v", kind, err)
	}
	return r
}

// deploy creates a worker answering with source, with handlers and the
// version's extra bindings, and its endpoint; it returns the worker's
// name and the endpoint's hostname once every replica's ingress answers
// GET / with 200.
func (p *plane) deploy(source string, handlers []any, bindings map[string]any) (worker, hostname string) {
	p.b.Helper()
	worker = p.create("ModuleWorker", "worker", map[string]any{}).Metadata.Name
	digest, err := p.e.UploadBundle(p.ctx, p.e.A1, []byte(source))
	if err != nil {
		p.b.Fatal(err)
	}
	bundle := p.create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest}).Metadata.Name
	spec := map[string]any{"worker": p.e.Rel("ModuleWorker", worker), "bundle": p.e.Rel("WorkerBundle", bundle), "handlers": handlers}
	for k, v := range bindings {
		spec[k] = v
	}
	version := p.create("WorkerVersion", "version", spec).Metadata.Name
	p.create("WorkerDeployment", "deploy", map[string]any{"worker": p.e.Rel("ModuleWorker", worker),
		"versions": []any{map[string]any{"weight": 10000, "workerVersion": p.e.Rel("WorkerVersion", version)}}})
	ep, err := p.e.Create(p.ctx, p.e.A1, "WorkerEndpoint", p.e.Name("endpoint"), map[string]any{"worker": p.e.Rel("ModuleWorker", worker)})
	if err != nil {
		p.b.Fatal(err)
	}
	var out struct{ Hostname string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.Hostname == "" {
		p.b.Fatalf("the endpoint's outputs %s: %v", ep.Status.Outputs, err)
	}
	for i := range p.ingress {
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, _, err := p.get(i, out.Hostname, "/")
			if err == nil && status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				p.b.Fatalf("replica %d's ingress never served %s (last %d %v):\n%s", i, out.Hostname, status, err, p.c.Logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return worker, out.Hostname
}

// get sends GET path with Host hostname to replica i's ingress.
func (p *plane) get(i int, hostname, path string) (int, string, error) {
	return hostGet(p.hc, p.ingress[i], hostname, path)
}

// hostGet sends GET base+path with Host hostname and returns the status
// and body.
func hostGet(c *http.Client, base, hostname, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = hostname
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), err
}

// shardSocket is the unix socket replica i's workerd serves the tenant's
// only worker version on: read from the config its workerd child was
// started with (`workerd serve CONFIG config`, engine.Start), the version
// socket being the one with a forwarded-proto header
// (engine.WriteConfig). Requests there bypass the host: the floor.
func (p *plane) shardSocket(i int) (socket string, pid int) {
	p.b.Helper()
	host := p.c.Replicas[i].PID()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		p.b.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(pid); !ok || st.ppid != host {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) < 3 || args[len(args)-1] != "config" {
			continue
		}
		config, err := os.ReadFile(args[len(args)-2])
		if err != nil {
			p.b.Fatalf("replica %d's workerd config: %v", i, err)
		}
		var found []string
		for _, line := range strings.Split(string(config), "\n") {
			if !strings.Contains(line, "forwardedProtoHeader") {
				continue
			}
			_, rest, ok := strings.Cut(line, `address = "unix:`)
			if sock, _, ok2 := strings.Cut(rest, `"`); ok && ok2 {
				found = append(found, sock)
			}
		}
		if len(found) != 1 {
			p.b.Fatalf("replica %d's workerd config has %d version sockets, want the hello worker's alone", i, len(found))
		}
		return found[0], pid
	}
	p.b.Fatalf("replica %d (pid %d) has no workerd child", i, host)
	return "", 0
}

// window is one measured stretch of load.
type window struct {
	n       int
	elapsed time.Duration
	lat     []time.Duration // sorted
	cpu     cpuSample       // spent during it
}

func (w window) rate() float64 { return float64(w.n) / w.elapsed.Seconds() }

// pct is the q-quantile of the latencies (nearest rank).
func (w window) pct(q float64) time.Duration {
	if len(w.lat) == 0 {
		return 0
	}
	return w.lat[int(q*float64(len(w.lat)-1)+0.5)]
}

// per is d in µs per operation.
func (w window) per(d time.Duration) float64 { return float64(d.Microseconds()) / float64(w.n) }

// loadFor runs op(g) from c goroutines (goroutine g) for d and measures
// every call and the CPU of every party; the first error fails b.
func (p *plane) loadFor(c int, d time.Duration, op func(g int) error) window {
	var (
		mu   sync.Mutex
		all  []time.Duration
		wg   sync.WaitGroup
		once sync.Once
	)
	cpu0 := p.cpu.sample()
	start := time.Now()
	stop := start.Add(d)
	for g := range c {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for {
				t0 := time.Now()
				if t0.After(stop) {
					break
				}
				if err := op(g); err != nil {
					once.Do(func() { p.b.Error(err) })
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	w := window{n: len(all), elapsed: time.Since(start), lat: all, cpu: p.cpu.sample().minus(cpu0)}
	slices.Sort(w.lat)
	if w.n == 0 {
		p.b.Fatal("no request completed")
	}
	return w
}

func (s cpuSample) minus(o cpuSample) cpuSample {
	return cpuSample{host: s.host - o.host, pg: s.pg - o.pg, client: s.client - o.client, engine: s.engine - o.engine}
}

// benchEnvInt reads a positive integer knob, or def.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// benchEnvDuration reads a positive duration knob, or def.
func benchEnvDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration such as 3s", name, v)
	}
	return d
}

// loadavg is the 1, 5 and 15 minute load averages (/proc/loadavg).
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// medianOf is the median of xs (a sorted copy).
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func joinFloats(xs []float64, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " ")
}
