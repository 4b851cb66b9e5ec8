package ingress_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestRolloutUnderLoadDropsNothing: 16 clients request a worker while its
// deployment moves to a new version; no request fails, and once a client
// has seen the new code it never sees the old one again
// (spec/runtime-v1.md §9.4).
func TestRolloutUnderLoadDropsNothing(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	app, err := e.DeployApp(ctx, e.A1, "fetch") // answers "fetch"
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.Create(ctx, e.A1, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": conformance.Rel("ModuleWorker", app.Worker.Metadata.Name)})
	if err != nil {
		t.Fatal(err)
	}
	hostname := endpointHostname(t, ep.Status.Outputs)
	first := waitBody(t, front, hostname, func(b string) bool { return b == "fetch" })
	t.Logf("v1 answers %q", first)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	var stop atomic.Bool
	var failures, total, regressions atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sawNew := false
			for !stop.Load() {
				req, _ := http.NewRequest(http.MethodGet, front.URL+"/", nil)
				req.Host = hostname
				resp, err := client.Do(req)
				total.Add(1)
				if err != nil {
					failures.Add(1)
					t.Errorf("request failed during the rollout: %v", err)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					failures.Add(1)
					t.Errorf("during the rollout: %d %q %v", resp.StatusCode, body, err)
					continue
				}
				switch string(body) {
				case "fetch":
					if sawNew {
						regressions.Add(1)
					}
				case "v2":
					sawNew = true
				default:
					t.Errorf("unexpected answer %q", body)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	digest, err := e.UploadBundle(ctx, e.A1, []byte(`export default { async fetch() { return new Response("v2"); } };`))
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	if err != nil {
		t.Fatal(err)
	}
	workerRel := conformance.Rel("ModuleWorker", app.Worker.Metadata.Name)
	v2, err := e.Create(ctx, e.A1, "WorkerVersion", e.Name("version"), map[string]any{"worker": workerRel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(ctx, e.A1, app.Deployment, map[string]any{"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v2.Metadata.Name)}}}); err != nil {
		t.Fatal(err)
	}
	waitBody(t, front, hostname, func(b string) bool { return b == "v2" })
	time.Sleep(2 * time.Second) // past the old generation's stop
	stop.Store(true)
	wg.Wait()
	t.Logf("%d requests during the rollout, %d failed, %d old answers after a new one", total.Load(), failures.Load(), regressions.Load())
	if regressions.Load() != 0 {
		t.Errorf("%d requests answered with the old code after the client saw the new code", regressions.Load())
	}
}

func endpointHostname(t *testing.T, outputs []byte) string {
	t.Helper()
	var o struct{ Hostname string }
	if err := json.Unmarshal(outputs, &o); err != nil || o.Hostname == "" {
		t.Fatalf("no hostname in the endpoint's outputs %s (%v)", outputs, err)
	}
	return o.Hostname
}

// waitBody polls GET hostname/ until a 200 body satisfies ok.
func waitBody(t *testing.T, front *httptest.Server, hostname string, ok func(string) bool) string {
	t.Helper()
	var last string
	for range 600 {
		status, _, body := get(t, front, hostname, "/")
		if status == http.StatusOK && ok(body) {
			return body
		}
		last = body
		sleep()
	}
	t.Fatalf("%s never gave the awaited answer; last %q", hostname, last)
	return ""
}
