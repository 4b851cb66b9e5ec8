package replicatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// benchClients is the concurrency of every benchmark (the performance
// budget's c = 32, ARCHITECTURE.md §7).
const benchClients = 32

// benchReadSet is how many resources the read benchmarks read at random.
const benchReadSet = 256

// benchResults keeps the last measured rate and per-operation CPU (µs of
// host, PostgreSQL, client) of each sub-benchmark for the summary
// BenchmarkReplicas prints.
var benchResults = struct {
	sync.Mutex
	rate map[string]float64
	cpu  map[string][3]float64
}{rate: map[string]float64{}, cpu: map[string][3]float64{}}

// runConcurrent runs op b.N times from benchClients goroutines (goroutine
// g calls op(g, i)) and reports ops/s and, when cpu is not nil, the CPU
// each party spent per operation; the first error fails b.
func runConcurrent(b *testing.B, label string, cpu *cpuMeter, op func(g int, i int64) error) {
	b.ResetTimer()
	start, used := time.Now(), cpu.sample()
	fanOut(b, int64(b.N), op)
	rate := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(rate, "ops/s")
	cpu.report(b, label, used, b.N)
	benchResults.Lock()
	benchResults.rate[label] = rate
	benchResults.Unlock()
}

// fanOut calls op(g, i) for i = 1..n from benchClients goroutines
// (goroutine g), each taking the next i; the first error fails b and
// stops its goroutine.
func fanOut(b *testing.B, n int64, op func(g int, i int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	for g := 0; g < benchClients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := next.Add(1); i <= n; i = next.Add(1) {
				if err := op(g, i); err != nil {
					once.Do(func() { b.Error(err) })
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// benchHost is one measured setup: clients spread over its replicas
// (goroutine g speaks to replica g mod N directly, the balancer a client
// pool makes, so no proxy competes for the two cores).
type benchHost struct {
	clients []*client.Client
	req     wire.ResourceRequest
	seq     atomic.Int64
}

func startBenchHost(b *testing.B, n int, data string) (*replicatest.Cluster, *benchHost) {
	c := replicatest.Start(b, replicatest.Options{Replicas: n, Data: data})
	h := &benchHost{}
	for _, r := range c.Replicas {
		cl, err := client.New(context.Background(), r.URL, client.Options{Token: hosttest.TokenA1, MaxIdleConnsPerHost: 64})
		if err != nil {
			b.Fatal(err)
		}
		h.clients = append(h.clients, cl)
	}
	profiles, err := h.clients[0].SupportForms(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.Kind == "EdgeKVNamespace" {
			h.req = wire.ResourceRequest{APIVersion: p.FormRef.APIVersion, Kind: p.FormRef.Kind, Form: wire.FormReference{FormRef: *p.FormRef},
				Metadata: wire.Metadata{Space: "bench"}, Spec: json.RawMessage(`{}`)}
		}
	}
	return c, h
}

func (h *benchHost) create(ctx context.Context, g int, name string) error {
	c := h.clients[g%len(h.clients)]
	r := h.req
	r.Metadata.Name = name
	p, err := c.Prepare(ctx, r, "")
	if err != nil {
		return err
	}
	_, err = c.Apply(ctx, wire.ApplyRequest{APIVersion: r.APIVersion, Kind: r.Kind, Form: r.Form, Metadata: r.Metadata, Spec: p.Resource.Spec,
		Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	return err
}

// benchSetup measures creates and reads against n replicas on data and
// returns the FormRef it created.
func benchSetup(b *testing.B, label string, n int, data func(b *testing.B) string) form.FormRef {
	ctx := context.Background()
	url := data(b)
	c, h := startBenchHost(b, n, url)
	defer c.Stop()
	cpu := &cpuMeter{}
	if strings.HasPrefix(url, "postgres") {
		cpu = pgMeter(b, nil)
	}
	for _, r := range c.Replicas {
		cpu.hosts = append(cpu.hosts, r.PID())
	}
	b.Run("create/"+label, func(b *testing.B) {
		runConcurrent(b, "create/"+label, cpu, func(g int, _ int64) error {
			return h.create(ctx, g, fmt.Sprintf("kv-%d", h.seq.Add(1)))
		})
	})
	for i := 0; i < benchReadSet; i++ {
		if err := h.create(ctx, i, fmt.Sprintf("read-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("read/"+label, func(b *testing.B) {
		runConcurrent(b, "read/"+label, cpu, func(g int, i int64) error {
			_, err := h.clients[g%len(h.clients)].Read(ctx, client.Address{Space: "bench", Ref: h.req.Form.FormRef, Name: fmt.Sprintf("read-%d", i%benchReadSet)})
			return err
		})
	})
	return h.req.Form.FormRef
}

// floorSchema is the rows the host's create writes, without the host: a
// resource row keyed by its address.
const floorSchema = `CREATE TABLE floor_resources (
	tenant text NOT NULL, space text NOT NULL, api_version text NOT NULL, kind text NOT NULL, name text NOT NULL,
	uid text NOT NULL UNIQUE, form_ref jsonb NOT NULL, generation bigint NOT NULL, revision bigint NOT NULL,
	spec jsonb NOT NULL, spec_digest text NOT NULL, status jsonb NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
	PRIMARY KEY (tenant, space, api_version, kind, name))`

// benchFloor measures bare pgx inserts and primary-key selects of the same
// rows at the same concurrency, on the same server with its fsync and
// synchronous_commit as they are: what the database itself allows.
func benchFloor(b *testing.B, ref form.FormRef) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = benchClients
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, floorSchema); err != nil {
		b.Fatal(err)
	}
	formRef, err := json.Marshal(ref)
	if err != nil {
		b.Fatal(err)
	}
	spec, err := ijson.Canonical([]byte(`{}`))
	if err != nil {
		b.Fatal(err)
	}
	status := `{"observedGeneration":"1","conditions":[{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`
	var seq atomic.Int64
	cpu := pgMeter(b, nil)
	insert := func(name string) error {
		now := time.Now()
		_, err := pool.Exec(ctx, `INSERT INTO floor_resources VALUES ($1,$2,$3,$4,$5,$6,$7,1,1,$8,$9,$10,$11,$11)`,
			"tenant-a", "bench", ref.APIVersion, ref.Kind, name, "uid-"+name, formRef, spec, ijson.SumDigest(spec), status, now)
		return err
	}
	b.Run("create/floor-pgx", func(b *testing.B) {
		runConcurrent(b, "create/floor-pgx", cpu, func(_ int, _ int64) error { return insert(fmt.Sprintf("kv-%d", seq.Add(1))) })
	})
	for i := 0; i < benchReadSet; i++ {
		if err := insert(fmt.Sprintf("read-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("read/floor-pgx", func(b *testing.B) {
		runConcurrent(b, "read/floor-pgx", cpu, func(_ int, i int64) error {
			var uid string
			var specOut, statusOut []byte
			return pool.QueryRow(ctx, `SELECT uid, spec, status FROM floor_resources WHERE tenant=$1 AND space=$2 AND api_version=$3 AND kind=$4 AND name=$5`,
				"tenant-a", "bench", ref.APIVersion, ref.Kind, fmt.Sprintf("read-%d", i%benchReadSet)).Scan(&uid, &specOut, &statusOut)
		})
	})
}

// BenchmarkReplicasRoundTrips counts the database round trips of one
// create (prepare + PUT) and one exact read on PostgreSQL: one replica
// whose database connections pass through a counting proxy
// (pgtest.Proxy), one client, so no contention retry inflates the count.
// The bare-pgx floor is one round trip per insert or select.
func BenchmarkReplicasRoundTrips(b *testing.B) {
	proxy, via := pgtest.NewProxy(b, pgtest.URL(b))
	c, h := startBenchHost(b, 1, via)
	defer c.Stop()
	ctx := context.Background()
	perOp := map[string]float64{}
	measure := func(label string, op func(i int) error) {
		b.Run(label, func(b *testing.B) {
			if err := op(-1); err != nil { // warm-up: the first request prepares statements
				b.Fatal(err)
			}
			before := proxy.RoundTrips()
			b.ResetTimer()
			for i := range b.N {
				if err := op(i); err != nil {
					b.Fatal(err)
				}
			}
			perOp[label] = float64(proxy.RoundTrips()-before) / float64(b.N)
			b.ReportMetric(perOp[label], "roundtrips/op")
		})
	}
	var created atomic.Int64
	// One resource before either case, so the read case also runs alone
	// (-bench RoundTrips/read).
	if err := h.create(ctx, 0, fmt.Sprintf("trip-%d", created.Add(1))); err != nil {
		b.Fatal(err)
	}
	measure("create", func(int) error { return h.create(ctx, 0, fmt.Sprintf("trip-%d", created.Add(1))) })
	measure("read", func(i int) error {
		_, err := h.clients[0].Read(ctx, client.Address{Space: "bench", Ref: h.req.Form.FormRef, Name: fmt.Sprintf("trip-%d", 1+(i+1)%int(created.Load()))})
		return err
	})
	fmt.Printf("database round trips per operation (postgres, one replica; bare-pgx floor 1): create %.1f, read %.1f\n", perOp["create"], perOp["read"])
}

// BenchmarkReplicas measures, in one run and at c = 32, durable creates
// (prepare + PUT of an EdgeKVNamespace) and exact reads against `host
// serve` processes on SQLite (one replica), on PostgreSQL with one and
// with two replicas, and the floor: bare pgx inserts and selects of the
// same rows. It prints them beside the PostgreSQL targets of
// ARCHITECTURE.md §7 (spec/decisions/0013-replica-tests.md).
func BenchmarkReplicas(b *testing.B) {
	pg := func(b *testing.B) string { return pgtest.URL(b) }
	ref := benchSetup(b, "sqlite-1", 1, func(b *testing.B) string { return filepath.Join(b.TempDir(), "host.db") })
	if os.Getenv(pgtest.EnvVar) == "" {
		b.Logf("PostgreSQL benchmarks skipped: %s is unset (make bench runs them through scripts/postgres.sh)", pgtest.EnvVar)
		printSummary()
		return
	}
	benchSetup(b, "postgres-1", 1, pg)
	benchSetup(b, "postgres-2", 2, pg)
	benchFloor(b, ref)
	printSummary()
}

// printSummary prints every measured rate beside its target and the
// bare-pgx floor of the same run (the machine may be shared: the ratio
// to the floor is the comparable figure).
func printSummary() {
	benchResults.Lock()
	defer benchResults.Unlock()
	r := benchResults.rate
	labels := make([]string, 0, len(r))
	for l := range r {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	fmt.Printf("\nreplica benchmarks, c=%d (ops/s; %% of the bare-pgx floor of this run; CPU µs per operation of host, PostgreSQL, client):\n", benchClients)
	for _, l := range labels {
		op, setup, _ := strings.Cut(l, "/")
		floor := ""
		if f := r[op+"/floor-pgx"]; f > 0 && setup != "floor-pgx" {
			floor = fmt.Sprintf("%5.1f%% of floor", 100*r[l]/f)
		}
		target := ""
		switch l {
		case "create/postgres-1":
			target = "target >= 1500"
		case "read/postgres-1":
			target = "target >= 8000"
		case "create/postgres-2", "read/postgres-2":
			one := r[op+"/postgres-1"]
			target = fmt.Sprintf("target >= %.0f (within 20%% of one replica); %.0f%% of one replica", 0.8*one, 100*r[l]/one)
		}
		c := benchResults.cpu[l]
		fmt.Printf("  %-20s %10.0f  %-16s cpu %4.0f/%4.0f/%4.0f  %s\n", l, r[l], floor, c[0], c[1], c[2], target)
	}
}
