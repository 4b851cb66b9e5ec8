package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// BenchmarkCreateParallel measures durable creates (ARCHITECTURE.md §7:
// ≥ 3,000/s at 32 concurrent clients, flat from 0 to 100,000 stored).
// Each op is one Update as the host's create makes it: read the key (not
// found), Next("uid"), CreateResource, PutIdempotency; committed with
// synchronous=FULL.
func BenchmarkCreateParallel(b *testing.B) {
	for _, stored := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "host.db")
			copyFile(b, preloaded(b, stored), path)
			s := openTest(b, path, Options{})
			var seq atomic.Int64
			b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Update(context.Background(), createFn(int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
	}
}

func createFn(i int) func(store.Tx) error {
	r := testResource(fmt.Sprintf("bench-%d", i), "")
	r.Spec = []byte(fmt.Sprintf(`{"title":"bench-%d","keys":["a","b","c"],"ttlSeconds":3600,"description":"a KV namespace created by the benchmark"}`, i))
	now := time.Now()
	r.CreatedAt, r.UpdatedAt = now, now
	return func(tx store.Tx) error {
		if _, err := tx.Resource(r.Key); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("resource %s exists: %v", r.Name, err)
		}
		n, err := tx.Next("uid")
		if err != nil {
			return err
		}
		r.UID = fmt.Sprintf("uid-%d", n)
		if err := tx.CreateResource(r); err != nil {
			return err
		}
		return tx.PutIdempotency(&store.Idempotency{
			Tenant: r.Tenant, Principal: "bench", Space: r.Space, Key: "takoform-" + r.Name,
			Fingerprint: "sha256:9999999999999999999999999999999999999999999999999999999999999999",
			Status:      201, ETag: `"1"`, Body: r.Spec, BoundUID: r.UID, CreatedAt: now,
		})
	}
}

var preloads sync.Map // stored count → path of a closed database holding that many

// preloaded returns a database file holding stored resources, made once
// per process in one big transaction and copied by each benchmark run.
func preloaded(b *testing.B, stored int) string {
	if p, ok := preloads.Load(stored); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "takoform-bench-")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "host.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	err = s.Update(context.Background(), func(tx store.Tx) error {
		for i := range stored {
			if err := createFn(-1 - i)(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err := errors.Join(err, s.Close()); err != nil {
		b.Fatal(err)
	}
	preloads.Store(stored, path)
	return path
}

func copyFile(b *testing.B, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		b.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	preloads.Range(func(_, p any) bool {
		os.RemoveAll(filepath.Dir(p.(string)))
		return true
	})
	os.Exit(code)
}

// BenchmarkReadParallel measures exact reads (one View, Resource by key)
// at 32 concurrent clients over 100,000 stored resources (ARCHITECTURE.md
// §7, for the whole host: ≥ 32,000 reads/s).
func BenchmarkReadParallel(b *testing.B) {
	const stored = 100_000
	path := filepath.Join(b.TempDir(), "host.db")
	copyFile(b, preloaded(b, stored), path)
	s := openTest(b, path, Options{})
	var seq atomic.Int64
	// A cancellable context, as every HTTP request carries one.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := testResource(fmt.Sprintf("bench-%d", -1-int(seq.Add(1)%stored)), "").Key
			err := s.View(ctx, func(tx store.Tx) error {
				_, err := tx.Resource(k)
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
}

// BenchmarkExactResource is one exact read (Store.ExactAnswer) at a
// time: the store's own CPU and allocations per read, without HTTP.
func BenchmarkExactResource(b *testing.B) {
	s := openTest(b, filepath.Join(b.TempDir(), "host.db"), Options{})
	r := testResource("exact", "uid-exact")
	if err := s.Update(b.Context(), func(tx store.Tx) error { return tx.CreateResource(r) }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		if _, err := s.ExactAnswer(b.Context(), r.Key, r.FormRef); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
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

// BenchmarkListsView is one View of each listing sqlcore serves for
// both stores' edge.kv, edge.queue and migration ledgers: kv reads an
// entry and lists ten keys of its namespace, queue lists ten messages,
// ledger reads a ledger of ten entries. The store's allocations per
// View, without HTTP (PERFORMANCE.md, log entry "One SQL core for KV,
// queue listings and ledger reads").
func BenchmarkListsView(b *testing.B) {
	s := openTest(b, filepath.Join(b.TempDir(), "host.db"), Options{})
	now := time.Now()
	err := s.Update(b.Context(), func(tx store.Tx) error {
		var msgs []*store.QueueMessage
		var entries []store.MigrationEntry
		for i := range 10 {
			e := &store.KVEntry{Tenant: "t", Namespace: "ns", Key: fmt.Sprintf("k%02d", i), Value: []byte("value"), ExpiresAt: now.Add(time.Hour)}
			if err := tx.KVPut(e); err != nil {
				return err
			}
			msgs = append(msgs, &store.QueueMessage{Queue: "q", ID: fmt.Sprintf("m%02d", i), Tenant: "t", Body: []byte("body"), AcceptedAt: now, DeliverableAt: now})
			entries = append(entries, store.MigrationEntry{Path: fmt.Sprintf("%04d_step.sql", i), Digest: "sha256:0"})
		}
		if err := tx.QueueSend(msgs); err != nil {
			return err
		}
		return tx.AppendMigrationLedger("t", "db", 0, entries)
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func(tx store.Tx) (int, error)
	}{
		{"kv", func(tx store.Tx) (int, error) {
			if _, err := tx.KVGet("ns", "k07", now); err != nil {
				return 0, err
			}
			keys, err := tx.KVList("ns", "k", "", now, 10)
			return len(keys), err
		}},
		{"queue", func(tx store.Tx) (int, error) {
			msgs, err := tx.QueueMessages("q", 10)
			return len(msgs), err
		}},
		{"ledger", func(tx store.Tx) (int, error) {
			entries, err := tx.MigrationLedger("db")
			return len(entries), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := s.View(b.Context(), func(tx store.Tx) error {
					n, err := c.fn(tx)
					if err == nil && n != 10 {
						err = fmt.Errorf("read %d rows, want 10", n)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
