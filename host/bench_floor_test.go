package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
)

// Budgets of ARCHITECTURE.md §7: exact reads at c = 32 reach 32,000/s
// or 0.6x the HTTP floor of the same run; creates reach 3,000/s.
const (
	readBudgetOps    = 32000
	readBudgetRatio  = 0.6
	createBudgetOps  = 3000
	benchConcurrency = 16 // x GOMAXPROCS (2 on the reference box) = 32 clients
)

// BenchmarkReadFloor is the HTTP floor of BenchmarkRead: a plain net/http
// handler writing the body, ETag and content type our host answers an
// exact read with, read by the same client (so the client's own decoding
// and checks are in both figures). BenchmarkReadVsFloor runs both in one
// run and reports the ratio against the budget.
func BenchmarkReadVsFloor(b *testing.B) {
	var capture captured
	h := hosttest.Start(b, benchOptions(b, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !capture.on.Load() {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			capture.path, capture.hdr, capture.body = r.URL.Path, rec.Header().Clone(), rec.Body.Bytes()
			for k, v := range capture.hdr {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(capture.body)
		})
	}))
	c, req := benchClient(b, h, 0)
	req.Metadata.Name = "read-me"
	res, err := prepareApply(context.Background(), c, req, nil)
	if err != nil {
		b.Fatal(err)
	}
	addr := client.Address{Space: req.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name}
	capture.on.Store(true)
	if _, err := c.Read(context.Background(), addr); err != nil {
		b.Fatal(err)
	}
	capture.on.Store(false)
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != capture.path { // discovery, once, from the host
			h.Server.ServeHTTP(w, r)
			return
		}
		for k, v := range capture.hdr {
			w.Header()[k] = v
		}
		w.WriteHeader(http.StatusOK)
		w.Write(capture.body)
	}))
	b.Cleanup(floor.Close)
	fc, err := client.New(context.Background(), floor.URL, client.Options{Token: hosttest.TokenA1, MaxIdleConnsPerHost: 64})
	if err != nil {
		b.Fatal(err)
	}
	// run reads at c = 32 and returns reads/s and the process's CPU
	// microseconds per read (client and server both, as in the floor).
	run := func(cl *client.Client) (float64, float64) {
		var n atomic.Int64
		start, cpu := time.Now(), cpuTime(b)
		b.SetParallelism(benchConcurrency)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cl.Read(context.Background(), addr); err != nil {
					b.Error(err)
					return
				}
				n.Add(1)
			}
		})
		return float64(n.Load()) / time.Since(start).Seconds(), float64((cpuTime(b) - cpu).Microseconds()) / float64(n.Load())
	}
	b.ResetTimer()
	// Interleave halves so load changes on a shared box hit both figures.
	hostOps, hostCPU := run(c)
	floorOps, floorCPU := run(fc)
	hostOps2, hostCPU2 := run(c)
	floorOps2, floorCPU2 := run(fc)
	hostOps, floorOps = (hostOps+hostOps2)/2, (floorOps+floorOps2)/2
	hostCPU, floorCPU = (hostCPU+hostCPU2)/2, (floorCPU+floorCPU2)/2
	b.ReportMetric(hostOps, "host-reads/s")
	b.ReportMetric(floorOps, "floor-reads/s")
	b.ReportMetric(hostOps/floorOps, "ratio")
	b.ReportMetric(floorCPU/hostCPU, "cpu-ratio")
	b.Logf("exact read: host %.0f/s, HTTP floor %.0f/s, ratio %.2f (budget >= %d/s or ratio >= %.1f); CPU per read host %.0f µs, floor %.0f µs, ratio %.2f; body %d bytes",
		hostOps, floorOps, hostOps/floorOps, readBudgetOps, readBudgetRatio, hostCPU, floorCPU, floorCPU/hostCPU, len(capture.body))
}

// captured is one answer of the host, replayed by the floor handler.
type captured struct {
	on          atomic.Bool
	path, query string
	hdr         http.Header
	body        []byte
}

// BenchmarkReadHandler is one exact read through the host's handler with
// no network (httptest recorder), one goroutine: the host's own CPU and
// allocations per read, steadier than the HTTP figures on a shared box.
func BenchmarkReadHandler(b *testing.B) {
	var capture captured
	h := hosttest.Start(b, benchOptions(b, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && capture.on.Load() {
				capture.path, capture.query, capture.hdr = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
			}
			next.ServeHTTP(w, r)
		})
	}))
	c, req := benchClient(b, h, 0)
	req.Metadata.Name = "read-me"
	res, err := prepareApply(context.Background(), c, req, nil)
	if err != nil {
		b.Fatal(err)
	}
	capture.on.Store(true)
	if _, err := c.Read(context.Background(), client.Address{Space: req.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name}); err != nil {
		b.Fatal(err)
	}
	capture.on.Store(false)
	target := capture.path + "?" + capture.query
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	defer reportCPU(b, cpu)
	for i := 0; i < b.N; i++ {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header = capture.hdr
		w := httptest.NewRecorder()
		h.Server.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("read answered %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkCreateVsFloor runs durable creates (prepare + PUT over HTTP,
// 32 clients) beside the storage floor of the same run: the same number
// of bare inserts (one CreateResource per Update) through the same
// store's group-commit writer (WAL, synchronous FULL), interleaved
// halves, at 0 and 100,000 stored.
func BenchmarkCreateVsFloor(b *testing.B) {
	for _, stored := range []int{0, 100000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			h, c, req := benchHost(b, stored)
			spec, _ := ijson.Canonical([]byte(`{}`))
			var seq atomic.Int64
			// run does b.N ops at c = 32 and returns ops/s, adding the
			// process's CPU per op (over both halves) to *cpuPer.
			var hostCPU, floorCPU time.Duration
			run := func(cpuPer *time.Duration, op func(i int64) error) float64 {
				start, cpu := time.Now(), cpuTime(b)
				b.SetParallelism(benchConcurrency)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(seq.Add(1)); err != nil {
							b.Error(err)
							return
						}
					}
				})
				*cpuPer += (cpuTime(b) - cpu) / time.Duration(2*b.N)
				return float64(b.N) / time.Since(start).Seconds()
			}
			create := func(i int64) error {
				r := req
				r.Metadata.Name = fmt.Sprintf("kv-%d", i)
				_, err := prepareApply(context.Background(), c, r, nil)
				return err
			}
			insert := func(i int64) error {
				now := time.Now()
				return h.Store.Update(context.Background(), func(tx store.Tx) error {
					return tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "tenant-a", Space: "floor", APIVersion: req.APIVersion, Kind: req.Kind, Name: fmt.Sprintf("floor-%d", i)},
						UID: fmt.Sprintf("floor-%d", i), FormRef: req.Form.FormRef, Generation: 1, Revision: 1, Spec: spec, SpecDigest: ijson.SumDigest(spec), Status: spec, CreatedAt: now, UpdatedAt: now})
				})
			}
			b.ResetTimer()
			hostOps, floorOps := run(&hostCPU, create), run(&floorCPU, insert)
			hostOps, floorOps = (hostOps+run(&hostCPU, create))/2, (floorOps+run(&floorCPU, insert))/2
			b.ReportMetric(hostOps, "host-creates/s")
			b.ReportMetric(floorOps, "floor-inserts/s")
			b.ReportMetric(hostOps/floorOps, "ratio")
			b.ReportMetric(float64(hostCPU.Microseconds()), "host-cpu-µs/create")
			b.Logf("creates at %d stored: host %.0f/s (prepare + PUT), storage floor %.0f bare inserts/s, ratio %.2f (budget >= %d/s); CPU per create %s (client included), per bare insert %s",
				stored, hostOps, floorOps, hostOps/floorOps, createBudgetOps, hostCPU, floorCPU)
		})
	}
}

// handlerTransport serves a client's requests with the host's handler in
// process (no network), so a profile of it is the host's own CPU.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := make(http.Header, len(r.Header)) // as the wire would canonicalise it
	for k, v := range r.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	r.Header = h
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	return w.Result(), nil
}

// BenchmarkCreateHandler is durable creates (prepare + PUT, 32 clients)
// through the host's handler with no network: the host's own CPU and
// allocations per create (the client's are in the figure too; a profile
// focused on host.(*Server).ServeHTTP separates them).
func BenchmarkCreateHandler(b *testing.B) {
	h := hosttest.Start(b, benchOptions(b, nil))
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, HTTPClient: &http.Client{Transport: handlerTransport{h.Server}}})
	if err != nil {
		b.Fatal(err)
	}
	req := kvRequest(&testing.T{}, c, "x")
	req.Metadata.Space = "bench"
	var seq atomic.Int64
	parallelCPU(b, func() error {
		r := req
		r.Metadata.Name = fmt.Sprintf("kv-%d", seq.Add(1))
		_, err := prepareApply(context.Background(), c, r, nil)
		return err
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// parallelCPU runs op b.N times at c = 32 (benchConcurrency goroutines
// per core) and reports allocations and the process's CPU per op.
func parallelCPU(b *testing.B, op func() error) {
	b.ReportAllocs()
	b.SetParallelism(benchConcurrency)
	b.ResetTimer()
	cpu := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu)
}

// cpuTime is the CPU time (user + system, every thread) this process has
// used; per operation it is steadier than wall time on a shared box.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU microseconds per operation since
// start (a cpuTime reading).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}
