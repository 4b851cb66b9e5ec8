package replicatest_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
)

// helloBench is the hello-world worker of BenchmarkIngressHello
// (internal/runtimebench); helloBenchBody its answer.
const (
	helloBench     = `export default { fetch() { return new Response("hello world\n"); } };`
	helloBenchBody = "hello world\n"
)

// ingressPath is one way to the hello worker: client g speaks to
// targets[g mod len(targets)] (base URL and its client).
type ingressPath struct {
	name    string
	base    []string
	clients []*http.Client
	runs    []window
}

// BenchmarkDataPlaneIngress measures hello-world requests per second at
// c = 32 through two replicas' worker ingresses against one's
// (spec/runtime-v1.md §10.5): two `host serve` replicas on one
// PostgreSQL, each with its own workerd, one hello-world worker
// deployed; the same 32 clients send to replica 0's ingress alone, or
// half to each replica's (and to replica 1's alone, to show the two
// are alike). The floors, in the same run: the same load on
// the replicas' workerd sockets themselves (BenchmarkIngressHello's
// socket floor, internal/runtimebench), replica 0's alone and both
// halves. Short rounds rotate the order (BENCH_RUNTIME_HELLO_ROUNDS,
// default 12; each path BENCH_RUNTIME_WINDOW, default 1s, after a
// warm-up of a quarter of it); it prints the medians over rounds of
// requests/s, p50/p99 and the CPU per request of the hosts, their
// workerd and this process (the clients), and the ratios per round. It
// does the same work whatever b.N is; make bench-runtime runs it once
// (-benchtime 1x).
func BenchmarkDataPlaneIngress(b *testing.B) {
	rounds := benchEnvInt(b, "BENCH_RUNTIME_HELLO_ROUNDS", 12)
	win := benchEnvDuration(b, "BENCH_RUNTIME_WINDOW", time.Second)
	p := startPlane(b, 2)
	_, hostname := p.deploy(helloBench, []any{"fetch"}, nil)
	var dials []*atomic.Int64 // connections each path's clients opened
	counted := func(tr *http.Transport) *http.Client {
		n := &atomic.Int64{}
		dials = append(dials, n)
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			n.Add(1)
			return dial(ctx, network, addr)
		}
		return &http.Client{Transport: tr}
	}
	tcp := func() *http.Client {
		return counted(&http.Transport{MaxIdleConnsPerHost: 2 * benchClients, DisableCompression: true})
	}
	s0, pid0 := p.shardSocket(0)
	s1, pid1 := p.shardSocket(1)
	unix := func(s string) *http.Client { return counted(engine.UnixTransport(s)) }
	paths := []*ingressPath{
		{name: "ingress, one replica", base: p.ingress[:1], clients: []*http.Client{tcp()}},
		{name: "ingresses, two replicas", base: p.ingress, clients: []*http.Client{tcp(), tcp()}},
		{name: "floor: workerd socket, one replica", base: []string{"http://workerd"}, clients: []*http.Client{unix(s0)}},
		{name: "floor: workerd sockets, two replicas", base: []string{"http://workerd", "http://workerd"}, clients: []*http.Client{unix(s0), unix(s1)}},
		{name: "ingress, the other replica alone", base: p.ingress[1:], clients: []*http.Client{tcp()}},
	}
	fmt.Printf("\n== hello world at c = %d through two replicas' ingresses and one's, on PostgreSQL (%d rounds of %s per path, order rotated)\n", benchClients, rounds, win)
	fmt.Printf("   load average (1 5 15 min) at start: %s\n", loadavg())
	b.ResetTimer()
	for round := range rounds {
		for k := range paths {
			path := paths[(k+round)%len(paths)]
			op := func(g int) error {
				i := g % len(path.base)
				status, body, err := hostGet(path.clients[i], path.base[i], hostname, "/")
				if err == nil && (status != http.StatusOK || body != helloBenchBody) {
					err = fmt.Errorf("%s (target %d) answered %d %q", path.name, i, status, body)
				}
				return err
			}
			p.loadFor(benchClients, win/4, op) // warm-up
			path.runs = append(path.runs, p.loadFor(benchClients, win, op))
		}
	}
	b.StopTimer()
	if a, pa := p.shardSocket(0); a != s0 || pa != pid0 {
		b.Fatalf("replica 0's shard changed during the run (%s → %s): the figures mix two processes", s0, a)
	}
	if a, pa := p.shardSocket(1); a != s1 || pa != pid1 {
		b.Fatalf("replica 1's shard changed during the run (%s → %s): the figures mix two processes", s1, a)
	}
	fmt.Printf("   %-38s %8s %9s %9s   %s\n", "path", "req/s", "p50", "p99", "CPU µs/request: hosts  workerd  bench (clients)")
	for _, path := range paths {
		var rate, p50, p99, host, eng, client []float64
		for _, w := range path.runs {
			rate = append(rate, w.rate())
			p50, p99 = append(p50, float64(w.pct(0.5))), append(p99, float64(w.pct(0.99)))
			host, eng, client = append(host, w.per(w.cpu.host)), append(eng, w.per(w.cpu.engine)), append(client, w.per(w.cpu.client))
		}
		fmt.Printf("   %-38s %8.0f %9s %9s   %22.1f %8.1f %16.1f\n", path.name, medianOf(rate), msOf(medianOf(p50)), msOf(medianOf(p99)),
			medianOf(host), medianOf(eng), medianOf(client))
	}
	ratio := func(a, f *ingressPath) (float64, []float64) {
		var xs []float64
		for i := range a.runs {
			xs = append(xs, a.runs[i].rate()/f.runs[i].rate())
		}
		return medianOf(xs), xs
	}
	for _, r := range []struct {
		label string
		a, f  *ingressPath
	}{
		{"two replicas' ingresses / one's", paths[1], paths[0]},
		{"floor: two workerd sockets / one", paths[3], paths[2]},
		{"one replica: ingress / its workerd socket", paths[0], paths[2]},
		{"two replicas: ingresses / their workerd sockets", paths[1], paths[3]},
	} {
		m, per := ratio(r.a, r.f)
		fmt.Printf("   %-48s %.2f× (per round %s)\n", r.label, m, joinFloats(per, "%.2f"))
	}
	var opened []string
	for _, d := range dials {
		opened = append(opened, strconv.FormatInt(d.Load(), 10))
	}
	fmt.Printf("   connections the clients opened, by client in path order: %s (keep-alive: at most %d each)\n", strings.Join(opened, " "), benchClients)
	fmt.Printf("   load average at end: %s\n", loadavg())
	two, _ := ratio(paths[1], paths[0])
	b.ReportMetric(two, "x-one-replica")
	b.ReportMetric(medianOf(rates(paths[1].runs)), "two-replicas-req/s")
}

func rates(ws []window) []float64 {
	var xs []float64
	for _, w := range ws {
		xs = append(xs, w.rate())
	}
	return xs
}

// msOf formats nanoseconds as milliseconds.
func msOf(ns float64) string { return fmt.Sprintf("%.2f ms", ns/float64(time.Millisecond)) }
