package runtimebench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// clients is the concurrency of the throughput figures (c = 32, as the
// host's budgets in PERFORMANCE.md).
const clients = 32

// helloSource is the hello-world worker; helloBody its answer.
const (
	helloSource = `export default { fetch() { return new Response("hello world\n"); } };
`
	helloBody = "hello world\n"
)

// envInt reads a positive integer knob, or def.
func envInt(b *testing.B, name string, def int) int {
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

// envDuration reads a positive duration knob (time.ParseDuration), or def.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
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

// rig is a host on a real SQLite file with its data plane on real workerd
// (the binding gateway on, as `host serve` runs it), and the ingress in
// front of it as `host serve` wires it on plain HTTP (its per-worker
// metrics, its request log at info in the default text format, written to
// io.Discard).
type rig struct {
	b     *testing.B
	ctx   context.Context
	h     *hosttest.Host
	e     *conformance.Env
	front *httptest.Server
	hc    *http.Client // requests to the ingress
}

// startRig starts the rig; adjust, when given, changes the host's options
// last (the events dispatcher's clock).
func startRig(b *testing.B, adjust ...func(*hosttest.Options)) *rig {
	bin := enginetest.Binary(b)
	var hostLog *slog.Logger // BENCH_RUNTIME_LOG=1: the host's log on stderr, to debug the rig
	if os.Getenv("BENCH_RUNTIME_LOG") == "1" {
		hostLog = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	o := hosttest.Options{Workerd: bin, Logger: hostLog}
	for _, f := range adjust {
		f(&o)
	}
	h := hosttest.Start(b, o)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log, Scheme: "http", Metrics: ingress.NewMetrics()})
	b.Cleanup(front.Close)
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		b.Fatal(err)
	}
	return &rig{b: b, ctx: ctx, h: h, e: e, front: front, hc: tcpClient()}
}

// tcpClient is a keep-alive client with room for every benchmark client's
// connection.
func tcpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients, DisableCompression: true}}
}

func (r *rig) create(kind, prefix string, spec any) *wire.Resource {
	r.b.Helper()
	res, err := r.e.Create(r.ctx, r.e.A1, kind, r.e.Name(prefix), spec)
	if err != nil {
		r.b.Fatalf("create %s: %v", kind, err)
	}
	return res
}

// worker is one deployed worker of tenant-a.
type worker struct {
	rel        map[string]any
	deployment *wire.Resource
	hostname   string
}

// newWorker creates a ModuleWorker with no version yet.
func (r *rig) newWorker() *worker {
	w := r.create("ModuleWorker", "worker", map[string]any{})
	return &worker{rel: conformance.Rel("ModuleWorker", w.Metadata.Name)}
}

// version uploads src and creates a WorkerVersion of w (with a KV binding
// named KV when kv is set).
func (r *rig) version(w *worker, src string, kv *wire.Resource) *wire.Resource {
	r.b.Helper()
	digest, err := r.e.UploadBundle(r.ctx, r.e.A1, []byte(src))
	if err != nil {
		r.b.Fatal(err)
	}
	bundle := r.create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
	spec := map[string]any{"worker": w.rel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"}}
	if kv != nil {
		spec["kvBindings"] = []any{map[string]any{"name": "KV", "resource": conformance.Rel("EdgeKVNamespace", kv.Metadata.Name)}}
	}
	return r.create("WorkerVersion", "version", spec)
}

func deploymentSpec(w *worker, v *wire.Resource) map[string]any {
	return map[string]any{"worker": w.rel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v.Metadata.Name)}}}
}

// deploy creates a worker answering with src (its version, deployment and
// endpoint) and returns it; the endpoint's create is the last call.
func (r *rig) deploy(src string, kv *wire.Resource) *worker {
	r.b.Helper()
	w := r.newWorker()
	v := r.version(w, src, kv)
	w.deployment = r.create("WorkerDeployment", "deploy", deploymentSpec(w, v))
	r.endpoint(w)
	return w
}

// endpoint creates w's WorkerEndpoint and records its hostname.
func (r *rig) endpoint(w *worker) {
	r.b.Helper()
	ep := r.create("WorkerEndpoint", "endpoint", map[string]any{"worker": w.rel})
	var out struct{ Hostname string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.Hostname == "" {
		r.b.Fatalf("the endpoint's outputs %s: %v", ep.Status.Outputs, err)
	}
	w.hostname = out.Hostname
}

// rollout points w's deployment at v (all the weight); it returns when the
// Host API call returns.
func (r *rig) rollout(w *worker, v *wire.Resource) {
	r.b.Helper()
	d, err := r.e.Update(r.ctx, r.e.A1, w.deployment, deploymentSpec(w, v))
	if err != nil {
		r.b.Fatalf("roll out: %v", err)
	}
	w.deployment = d
}

// get sends GET base+path with Host hostname and returns the status and
// body.
func get(c *http.Client, base, hostname, path string) (int, string, error) {
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

// waitAnswer polls hostname/ through the ingress every interval until it
// answers 200 with want, and returns when it did.
func (r *rig) waitAnswer(hostname, path, want string, interval time.Duration) time.Time {
	r.b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		status, body, err := get(r.hc, r.front.URL, hostname, path)
		if err == nil && status == http.StatusOK && body == want {
			return time.Now()
		}
		last = fmt.Sprintf("%d %q %v", status, body, err)
		time.Sleep(interval)
	}
	r.b.Fatalf("%s%s never answered %q; last %s", hostname, path, want, last)
	return time.Time{}
}

// target resolves hostname to its workerd socket and the tenant's shard
// process.
func (r *rig) target(hostname string) (*runtime.Target, int) {
	t, outcome, reason := r.h.Runtime.Resolve(hostname)
	if outcome != runtime.Routed {
		r.b.Fatalf("%s is not routed: %s", hostname, reason)
	}
	pid := r.h.Runtime.Processes()["tenant-a"]
	if pid == 0 {
		r.b.Fatal("tenant-a has no shard process")
	}
	return t, pid
}

// sample is one measured window.
type sample struct {
	n       int
	elapsed time.Duration
	lat     []time.Duration // sorted
	goCPU   time.Duration   // this process: clients, ingress or proxy
	engCPU  time.Duration   // the workerd process
	alloc   uint64          // bytes this process allocated
}

func (s sample) rate() float64 { return float64(s.n) / s.elapsed.Seconds() }

// pct is the q-quantile of the sorted latencies (nearest rank).
func (s sample) pct(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[int(q*float64(len(s.lat)-1)+0.5)]
}

func (s sample) cpuPer(d time.Duration) float64 { return float64(d.Microseconds()) / float64(s.n) }

// load runs op from c goroutines for d and measures every call; the first
// error fails b.
func load(b *testing.B, c int, d time.Duration, pid int, op func() error) sample {
	var (
		mu   sync.Mutex
		all  []time.Duration
		wg   sync.WaitGroup
		once sync.Once
	)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	cpu0, eng0 := selfCPU(b), procCPU(b, pid)
	start := time.Now()
	stop := start.Add(d)
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for {
				t0 := time.Now()
				if t0.After(stop) {
					break
				}
				if err := op(); err != nil {
					once.Do(func() { b.Error(err) })
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s := sample{n: len(all), elapsed: time.Since(start), lat: all, goCPU: selfCPU(b) - cpu0, engCPU: procCPU(b, pid) - eng0}
	goruntime.ReadMemStats(&m1)
	s.alloc = m1.TotalAlloc - m0.TotalAlloc
	slices.Sort(s.lat)
	if s.n == 0 {
		b.Fatal("no request completed")
	}
	return s
}

// selfCPU is this process's user and system CPU time (getrusage(2)).
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is process pid's user and system CPU time (/proc/PID/stat
// utime and stime, proc(5), in clock ticks of 1/100 s); 0 for pid 0.
func procCPU(b *testing.B, pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procKiB reads a size in KiB from /proc/PID/status (proc(5)): "VmRSS:",
// "RssAnon:", "RssFile:".
func procKiB(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
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

// median of xs (xs is sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func medianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// header prints a benchmark's heading with the machine's load.
func header(title string) {
	fmt.Printf("\n== %s\n   load average (1 5 15 min) at start: %s; %d CPUs\n", title, loadavg(), goruntime.NumCPU())
}

// children lists this process's workerd children (/proc/*/stat: comm
// and ppid, proc(5)).
func children(b *testing.B) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if s[open+1:end] == "workerd" && len(f) > 1 && f[1] == self && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}
