package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// latencies collects per-operation durations across goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) report(b *testing.B, start time.Time) {
	elapsed := time.Since(start)
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	if len(l.d) > 0 {
		b.ReportMetric(float64(l.d[len(l.d)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
}

// preload stores n EdgeKVNamespace resources directly (one transaction)
// so the benchmarks run against a populated file.
func preload(b *testing.B, h *hosttest.Host, req wire.ResourceRequest, n int) {
	spec, _ := ijson.Canonical([]byte(`{}`))
	status, _ := json.Marshal(wire.Status{ObservedGeneration: "1", Conditions: []wire.Condition{{Type: "Ready", Status: "True", Reason: "Available", LastTransitionTime: "2026-01-01T00:00:00Z"}}})
	now := time.Now()
	for done := 0; done < n; done += 10000 {
		err := h.Store.Update(context.Background(), func(tx store.Tx) error {
			for i := done; i < done+10000 && i < n; i++ {
				r := &store.Resource{Key: store.Key{Tenant: "tenant-a", Space: "preloaded", APIVersion: req.APIVersion, Kind: req.Kind, Name: fmt.Sprintf("pre-%d", i)},
					UID: fmt.Sprintf("pre-%d", i), FormRef: req.Form.FormRef, Generation: 1, Revision: 1, Spec: spec, SpecDigest: ijson.SumDigest(spec), Status: status, CreatedAt: now, UpdatedAt: now}
				if err := tx.CreateResource(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchHost(b *testing.B, stored int) (*hosttest.Host, *client.Client, wire.ResourceRequest) {
	h := hosttest.Start(b, benchOptions(b, nil))
	c, req := benchClient(b, h, stored)
	return h, c, req
}

// benchOptions is the host as it ships: request logging (JSON lines,
// here to io.Discard) and metrics on, and the process collecting at the
// GC percent `host serve` sets (cli.ServeGCPercent) until b ends; wrap,
// when set, wraps its handler.
func benchOptions(b *testing.B, wrap func(http.Handler) http.Handler) hosttest.Options {
	prior := debug.SetGCPercent(cli.ServeGCPercent)
	b.Cleanup(func() { debug.SetGCPercent(prior) })
	return hosttest.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Wrap: wrap}
}

func benchClient(b *testing.B, h *hosttest.Host, stored int) (*client.Client, wire.ResourceRequest) {
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1, MaxIdleConnsPerHost: 64})
	if err != nil {
		b.Fatal(err)
	}
	req := kvRequest(&testing.T{}, c, "x")
	req.Metadata.Space = "bench"
	if stored > 0 {
		preload(b, h, req, stored)
	}
	return c, req
}

func prepareApply(ctx context.Context, c *client.Client, req wire.ResourceRequest, cur *wire.Resource) (*wire.Resource, error) {
	gen, pre := "", client.Precondition{}
	if cur != nil {
		gen, pre = cur.Metadata.Generation, client.Precondition{Generation: cur.Metadata.Generation, UID: cur.Metadata.UID}
	}
	p, err := c.Prepare(ctx, req, gen)
	if err != nil {
		return nil, err
	}
	m, err := c.Apply(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, pre)
	if err != nil {
		return nil, err
	}
	return m.Resource, nil
}

// BenchmarkCreate measures durable creates (prepare + PUT) over real HTTP
// from 32 concurrent clients, at 0 and 100,000 stored resources;
// cpu-µs/op is this process's CPU (host and client) per create.
func BenchmarkCreate(b *testing.B) {
	for _, stored := range []int{0, 100000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			_, c, req := benchHost(b, stored)
			var seq atomic.Int64
			timedParallel(b, func() error {
				r := req
				r.Metadata.Name = fmt.Sprintf("kv-%d", seq.Add(1))
				_, err := prepareApply(context.Background(), c, r, nil)
				return err
			})
		})
	}
}

// BenchmarkRead measures exact reads over real HTTP from 32 concurrent
// clients, at 0 and 100,000 stored resources.
func BenchmarkRead(b *testing.B) {
	for _, stored := range []int{0, 100000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			_, c, req := benchHost(b, stored)
			req.Metadata.Name = "read-me"
			res, err := prepareApply(context.Background(), c, req, nil)
			if err != nil {
				b.Fatal(err)
			}
			addr := client.Address{Space: req.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name}
			var lat latencies
			b.SetParallelism(16)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t0 := time.Now()
					if _, err := c.Read(context.Background(), addr); err != nil {
						b.Error(err)
						return
					}
					lat.add(time.Since(t0))
				}
			})
			lat.report(b, start)
		})
	}
}

// BenchmarkUpdate measures fenced updates (prepare + PUT) of distinct
// resources from 32 concurrent clients (each goroutine updates its own).
func BenchmarkUpdate(b *testing.B) {
	for _, stored := range []int{0, 100000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			_, c, kv := benchHost(b, stored)
			req := formRequest(b, c, "AtLeastOnceQueue")
			req.Metadata.Space = kv.Metadata.Space
			var ids atomic.Int64
			var lat latencies
			b.SetParallelism(16)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				r := req
				r.Metadata.Name = fmt.Sprintf("upd-%d", ids.Add(1))
				r.Spec = json.RawMessage(`{"messageRetentionSeconds":60}`)
				cur, err := prepareApply(context.Background(), c, r, nil)
				if err != nil {
					b.Error(err)
					return
				}
				for i := 0; pb.Next(); i++ {
					r.Spec = json.RawMessage(fmt.Sprintf(`{"messageRetentionSeconds":%d}`, 61+i%100000))
					t0 := time.Now()
					if cur, err = prepareApply(context.Background(), c, r, cur); err != nil {
						b.Error(err)
						return
					}
					lat.add(time.Since(t0))
				}
			})
			lat.report(b, start)
		})
	}
}

func formRequest(b *testing.B, c *client.Client, kind string) wire.ResourceRequest {
	profiles, err := c.SupportForms(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.Kind == kind {
			return wire.ResourceRequest{APIVersion: p.FormRef.APIVersion, Kind: kind, Form: wire.FormReference{FormRef: *p.FormRef}, Metadata: wire.Metadata{Space: "bench"}}
		}
	}
	b.Fatalf("no %s", kind)
	return wire.ResourceRequest{}
}

// BenchmarkDelete measures fenced deletes (DELETE with generation and UID,
// 204) of distinct resources over real HTTP from 32 concurrent clients,
// each resource created through the host beforehand (outside the timer).
// cpu-µs/op is this process's CPU (host and client) per delete.
func BenchmarkDelete(b *testing.B) {
	_, c, req := benchHost(b, 0)
	addrs := make(chan deleteTarget, b.N)
	for i := 0; i < b.N; i++ {
		r := req
		r.Metadata.Name = fmt.Sprintf("del-%d", i)
		res, err := prepareApply(context.Background(), c, r, nil)
		if err != nil {
			b.Fatal(err)
		}
		addrs <- deleteTarget{client.Address{Space: r.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name},
			client.Precondition{Generation: res.Metadata.Generation, UID: res.Metadata.UID}}
	}
	close(addrs)
	timedParallel(b, func() error {
		d := <-addrs
		_, err := c.Delete(context.Background(), d.addr, d.pre)
		return err
	})
}

// timedParallel runs op b.N times from 32 concurrent clients (16 per
// GOMAXPROCS on this 2-core box) and reports this process's CPU per op,
// the p99 latency and the rate.
func timedParallel(b *testing.B, op func() error) {
	var lat latencies
	b.SetParallelism(16)
	b.ResetTimer()
	cpu, start := cpuTime(b), time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t0 := time.Now()
			if err := op(); err != nil {
				b.Error(err)
				return
			}
			lat.add(time.Since(t0))
		}
	})
	reportCPU(b, cpu)
	lat.report(b, start)
}

type deleteTarget struct {
	addr client.Address
	pre  client.Precondition
}
