package replicatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/wire"
)

// versionSource is a worker whose every answer is its version's name.
func versionSource(name string) string {
	return fmt.Sprintf(`export default { async fetch() { return new Response(%q); } };`, name)
}

// TestRolloutWhileTheOtherReplicaServes (issue item "shown under faults";
// spec/runtime-v1.md §10.5; repo decision 0061): two replicas, each with
// its own workerd and ingress, serve a worker at v1 while six readers
// (three pinned to each replica's ingress) read it in a loop. A rollout
// through replica 0's API (a new WorkerVersion, the deployment updated to
// it) moves the worker to v2, then a second one through replica 1's API
// to v3. No request is lost — every one is answered 200 by one of the
// versions — and no reader sees an older version after a newer one; both
// replicas serve the last version within 30 s of its deployment.
func TestRolloutWhileTheOtherReplicaServes(t *testing.T) {
	start := time.Now()
	c := eventsCluster(t, nil)
	ctx := context.Background()
	a := &eventsApp{c: c, e: newEnv(t, c.URL, "")}
	e := a.e
	create := func(kind, prefix string, spec map[string]any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v\n%s", kind, err, c.Logs())
		}
		return r
	}
	a.worker = create("ModuleWorker", "worker", map[string]any{}).Metadata.Name
	versions := []string{"v1", "v2", "v3"}
	names := map[string]string{} // served name -> WorkerVersion name
	names["v1"] = a.version(t, e, versionSource("v1"), map[string]any{"handlers": []any{"fetch"}})
	deploySpec := func(version string) map[string]any {
		return map[string]any{"worker": e.Rel("ModuleWorker", a.worker),
			"versions": []any{map[string]any{"weight": 10000, "workerVersion": e.Rel("WorkerVersion", names[version])}}}
	}
	cur := create("WorkerDeployment", "deploy", deploySpec("v1"))
	ep := create("WorkerEndpoint", "endpoint", map[string]any{"worker": e.Rel("ModuleWorker", a.worker)})
	var out struct{ Hostname string }
	if err := json.Unmarshal(ep.Status.Outputs, &out); err != nil || out.Hostname == "" {
		t.Fatalf("the endpoint's outputs %s: %v", ep.Status.Outputs, err)
	}
	a.hostname = out.Hostname
	for i := range c.Replicas {
		a.waitServing(t, i, 60*time.Second)
	}
	t.Logf("v1 serves on both replicas %v after the start", time.Since(start).Round(time.Second))

	order := map[string]int{"v1": 1, "v2": 2, "v3": 3}
	type reader struct {
		replica  int
		requests int
		seen     [4]int       // answers by version order
		first    [4]time.Time // first answer of each version
	}
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		readers []*reader
		errs    = make(chan error, 64)
	)
	for r := 0; r < 6; r++ {
		rd := &reader{replica: r % 2}
		readers = append(readers, rd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			newest := 1
			for !stop.Load() {
				status, body, err := a.get(rd.replica, "/")
				rd.requests++
				v, known := order[body]
				switch {
				case err != nil || status != http.StatusOK || !known:
					errs <- fmt.Errorf("a reader of replica %d: request %d answered %d %q (%v): lost", rd.replica, rd.requests, status, body, err)
					return
				case v < newest:
					errs <- fmt.Errorf("a reader of replica %d: request %d answered %s after it had seen %s", rd.replica, rd.requests, body, versions[newest-1])
					return
				}
				newest = v
				if rd.seen[v] == 0 {
					rd.first[v] = time.Now()
				}
				rd.seen[v]++
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()

	time.Sleep(time.Second) // the readers read v1 through both
	var err error
	for step, v := range versions[1:] {
		// The rollout goes through one replica's API while the other
		// serves the readers too.
		through := step % 2
		api := newEnv(t, c.Replicas[through].URL, e.Space)
		names[v] = a.version(t, api, versionSource(v), map[string]any{"handlers": []any{"fetch"}})
		if cur, err = api.Update(ctx, api.A1, cur, deploySpec(v)); err != nil {
			t.Fatalf("update the deployment to %s through replica %d: %v", v, through, err)
		}
		deployed := time.Now()
		for i := range c.Replicas {
			for deadline := deployed.Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				if _, body, err := a.get(i, "/"); err == nil && body == v {
					t.Logf("%s (deployed through replica %d) served by replica %d %v after the deployment's update", v, through, i, time.Since(deployed).Round(time.Millisecond))
					break
				}
				if lost := len(errs); time.Now().After(deadline) || lost > 0 {
					stop.Store(true)
					wg.Wait()
					close(errs)
					for err := range errs {
						t.Error(err)
					}
					t.Fatalf("replica %d does not serve %s 30 s after the deployment's update (or a reader failed: %d errors)\n%s", i, v, lost, c.Logs())
				}
			}
		}
		time.Sleep(time.Second) // the readers read v through both
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	for i, rd := range readers {
		total += rd.requests
		var got []string
		for v := 1; v <= 3; v++ {
			got = append(got, fmt.Sprintf("%s×%d", versions[v-1], rd.seen[v]))
		}
		t.Logf("reader %d (replica %d): %d requests, %s", i, rd.replica, rd.requests, strings.Join(got, " "))
		if rd.seen[3] == 0 && !t.Failed() {
			t.Errorf("reader %d never saw v3", i)
		}
	}
	t.Logf("%d requests through both ingresses across two rollouts, none lost; test ran %v", total, time.Since(start).Round(time.Second))
}
