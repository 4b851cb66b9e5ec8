package runtimebench_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
)

// ingressGoal is the ingress's budget: at least this fraction of a bare
// full-duplex reverse proxy's hello-world requests per second in front
// of the same workerd socket (PERFORMANCE.md's budget table).
const ingressGoal = 0.9

// bareProxy is the floor the ingress is held to: an httputil.ReverseProxy
// with full duplex on, to the same workerd socket over its own transport
// with the ingress's settings (engine.UnixTransport), and nothing else —
// no routing, limits, head timeout or request log.
func bareProxy(socket string) http.Handler {
	to := &url.URL{Scheme: "http", Host: "workerd"}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host
		},
		Transport: engine.UnixTransport(socket),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		p.ServeHTTP(w, r)
	})
}

// path is one way to the hello worker, measured at c = clients.
type path struct {
	name string
	c    *http.Client
	base string
	runs []sample
}

// BenchmarkIngressHello measures hello-world requests at c = 32 through
// the ingress (routing by hostname to the version's workerd socket),
// through the bare proxy in front of the same socket, and on the socket
// itself, in short rounds that rotate the order, so a shared machine's
// swings fall on every path alike (BENCH_RUNTIME_HELLO_ROUNDS, default
// 12; each path BENCH_RUNTIME_WINDOW, default 1s, after a warm-up of a
// quarter of it), and prints requests/s, p50/p99 latency, CPU per request
// (this process: the clients and the proxy; workerd) and this process's
// allocation per request, the medians over rounds, with the ratio to the
// floors per round. It does the same work whatever
// b.N is; make bench-runtime runs it once (-benchtime 1x).
func BenchmarkIngressHello(b *testing.B) {
	rounds := envInt(b, "BENCH_RUNTIME_HELLO_ROUNDS", 12)
	window := envDuration(b, "BENCH_RUNTIME_WINDOW", time.Second)
	r := startRig(b)
	w := r.deploy(helloSource, nil)
	r.waitAnswer(w.hostname, "/", helloBody, 50*time.Millisecond)
	t, pid := r.target(w.hostname)
	proxy := httptest.NewServer(bareProxy(t.Socket))
	defer proxy.Close()
	paths := []*path{
		{name: "ingress", c: tcpClient(), base: r.front.URL},
		{name: "bare ReverseProxy (floor)", c: tcpClient(), base: proxy.URL},
		{name: "workerd socket (floor)", c: &http.Client{Transport: engine.UnixTransport(t.Socket)}, base: "http://" + w.hostname},
	}
	header(fmt.Sprintf("hello world at c = %d through the ingress, a bare proxy and workerd's socket (%d rounds of %s per path, order rotated)", clients, rounds, window))
	b.ResetTimer()
	for round := range rounds {
		for k := range paths {
			p := paths[(k+round)%len(paths)]
			op := func() error {
				status, body, err := get(p.c, p.base, w.hostname, "/")
				if err == nil && (status != http.StatusOK || body != helloBody) {
					err = fmt.Errorf("%s answered %d %q", p.name, status, body)
				}
				return err
			}
			load(b, clients, window/4, pid, op) // warm-up
			p.runs = append(p.runs, load(b, clients, window, pid, op))
		}
	}
	b.StopTimer()
	if again, _ := r.target(w.hostname); again.Socket != t.Socket {
		b.Fatalf("the shard's generation changed during the run (%s → %s): the figures mix two processes", t.Socket, again.Socket)
	}
	fmt.Printf("   %-27s %8s %9s %9s %14s %14s %13s\n", "path", "req/s", "p50", "p99", "CPU µs/req Go", "CPU µs/req wd", "KiB/req Go")
	for _, p := range paths {
		var rate, goCPU, engCPU, alloc []float64
		var p50, p99 []time.Duration
		for _, s := range p.runs {
			rate = append(rate, s.rate())
			p50, p99 = append(p50, s.pct(0.50)), append(p99, s.pct(0.99))
			goCPU, engCPU = append(goCPU, s.cpuPer(s.goCPU)), append(engCPU, s.cpuPer(s.engCPU))
			alloc = append(alloc, float64(s.alloc)/1024/float64(s.n))
		}
		fmt.Printf("   %-27s %8.0f %9s %9s %14.1f %14.1f %13.1f\n", p.name, median(rate), ms(medianDur(p50)), ms(medianDur(p99)), median(goCPU), median(engCPU), median(alloc))
	}
	ratio := func(a, f *path) (float64, []float64) {
		var xs []float64
		for i := range a.runs {
			xs = append(xs, a.runs[i].rate()/f.runs[i].rate())
		}
		per := append([]float64(nil), xs...)
		return median(xs), per
	}
	proxyRatio, perProxy := ratio(paths[0], paths[1])
	socketRatio, perSocket := ratio(paths[0], paths[2])
	verdict := "within"
	if proxyRatio < ingressGoal {
		verdict = "BELOW"
	}
	fmt.Printf("   ingress / bare proxy: %.2f× (per round %s), goal ≥ %.2f×: %s\n", proxyRatio, fmtRatios(perProxy), ingressGoal, verdict)
	fmt.Printf("   ingress / workerd socket: %.2f× (per round %s), reported\n", socketRatio, fmtRatios(perSocket))
	// What each proxy costs this process per request beyond the socket
	// path (its server, its client to workerd), per round, then the
	// median: steadier than throughput on a shared machine.
	own := func(p *path) float64 {
		var xs []float64
		for i, s := range p.runs {
			d := paths[2].runs[i]
			xs = append(xs, s.cpuPer(s.goCPU)-d.cpuPer(d.goCPU))
		}
		return median(xs)
	}
	// The CPU ratio: the floor's CPU per request (this process and
	// workerd) over the ingress's, per round; on a CPU-bound box the
	// throughput a path can reach goes as its inverse, and it swings far
	// less than throughput when others share the machine.
	var cpuRatios []float64
	for i := range paths[0].runs {
		a, f := paths[0].runs[i], paths[1].runs[i]
		cpuRatios = append(cpuRatios, f.cpuPer(f.goCPU+f.engCPU)/a.cpuPer(a.goCPU+a.engCPU))
	}
	fmt.Printf("   CPU ratio, bare proxy's CPU per request / the ingress's (this process + workerd): %.2f× (per round %s)\n", median(append([]float64(nil), cpuRatios...)), fmtRatios(cpuRatios))
	fmt.Printf("   CPU of this process per request beyond the socket path (the proxy's own): ingress %.1f µs, bare proxy %.1f µs\n", own(paths[0]), own(paths[1]))
	fmt.Printf("   load average at end: %s\n", loadavg())
	b.ReportMetric(proxyRatio, "x-bare-proxy")
	b.ReportMetric(median(rates(paths[0].runs)), "ingress-req/s")
}

func rates(ss []sample) []float64 {
	var xs []float64
	for _, s := range ss {
		xs = append(xs, s.rate())
	}
	return xs
}

func fmtRatios(xs []float64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", x)
	}
	return s
}
