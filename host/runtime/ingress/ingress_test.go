package ingress_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// workerSource answers with its label, its env and how it was called; the
// path /throw throws.
func workerSource(label string) []byte {
	return []byte(`export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/throw") throw new Error("boom from ` + label + `");
    return Response.json({ answer: "` + label + `", url: request.url, keys: Object.keys(env), env, args: arguments.length, waitUntil: typeof ctx.waitUntil });
  },
};
`)
}

type answer struct {
	Answer    string         `json:"answer"`
	URL       string         `json:"url"`
	Keys      []string       `json:"keys"`
	Env       map[string]any `json:"env"`
	Args      int            `json:"args"`
	WaitUntil string         `json:"waitUntil"`
}

// startHost starts a host on a real SQLite file with its data plane
// (workerd: a binary or hosttest.NoWorkerd), and an ingress in front.
func startHost(t *testing.T, workerd string) (*hosttest.Host, *httptest.Server) {
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: workerd, Logger: log, Runtime: func(c *runtime.Config) {
		c.Limits = engine.Limits{CPUMillicores: 1000, MemoryBytes: 512 << 20} // enforced where cgroup v1 is writable
	}})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	return h, front
}

// testLog writes log lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func get(t *testing.T, front *httptest.Server, hostname, path string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, front.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = hostname
	resp, err := front.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", hostname, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s%s: reading the body: %v", hostname, path, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// waitFor polls GET hostname/ until the worker answers label.
func waitFor(t *testing.T, front *httptest.Server, hostname, label string) answer {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		status, _, body := get(t, front, hostname, "/hello?x=1")
		if status == http.StatusOK {
			var a answer
			if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Fatalf("the worker's answer is not its JSON: %q", body)
			}
			if a.Answer == label {
				return a
			}
		}
		last = body
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the worker at %s never answered %q; last answer %q", hostname, label, last)
	return answer{}
}

// TestDeployedWorkerAnswersAtItsEndpoint deploys a worker through the Host
// API on real SQLite and real workerd, requests it through the ingress by
// its endpoint hostname, rolls out a new version, and checks the host's
// own answers (spec/runtime-v1.md §2.2, §3.1, §9.1, §9.4, §10.8).
func TestDeployedWorkerAnswersAtItsEndpoint(t *testing.T) {
	binary := enginetest.Binary(t)
	h, front := startHost(t, binary)
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	create := func(kind, prefix string, spec any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		return r
	}
	worker := create("ModuleWorker", "worker", map[string]any{})
	workerRel := conformance.Rel("ModuleWorker", worker.Metadata.Name)
	version := func(label string) *wire.Resource {
		digest, err := e.UploadBundle(ctx, e.A1, workerSource(label))
		if err != nil {
			t.Fatal(err)
		}
		bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
		return create("WorkerVersion", "version", map[string]any{
			"worker": workerRel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"},
			"vars": map[string]any{"ZETA": "last", "GREETING": "hello " + label, "LIMITS": map[string]any{"n": 3, "on": true}},
		})
	}
	v1 := version("v1")
	deployment := create("WorkerDeployment", "deploy", map[string]any{
		"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v1.Metadata.Name)}},
	})
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": workerRel})
	var outputs struct{ Hostname string }
	if err := json.Unmarshal(endpoint.Status.Outputs, &outputs); err != nil {
		t.Fatalf("the endpoint's outputs %s: %v", endpoint.Status.Outputs, err)
	}
	hostname := outputs.Hostname
	if !strings.HasPrefix(hostname, "ep-") {
		t.Fatalf("the endpoint's hostname output is %q", hostname)
	}

	a := waitFor(t, front, hostname, "v1")
	if want := "https://" + hostname + "/hello?x=1"; a.URL != want {
		t.Errorf("request.url = %q, want %q", a.URL, want)
	}
	if strings.Join(a.Keys, ",") != "GREETING,LIMITS,ZETA" {
		t.Errorf("Object.keys(env) = %v, want exactly the vars in lexicographic order", a.Keys)
	}
	if a.Env["GREETING"] != "hello v1" || a.Env["LIMITS"].(map[string]any)["on"] != true || a.Env["LIMITS"].(map[string]any)["n"] != float64(3) {
		t.Errorf("env = %v, want the vars' JSON values", a.Env)
	}
	if a.Args != 3 || a.WaitUntil != "function" {
		t.Errorf("fetch got %d arguments and ctx.waitUntil %s, want 3 and a function", a.Args, a.WaitUntil)
	}
	// Upper case and a port reach the same worker (spec/runtime-v1.md §9.1 (1)).
	if status, _, _ := get(t, front, strings.ToUpper(hostname)+":443", "/"); status != http.StatusOK {
		t.Errorf("GET with the hostname in upper case and a port: %d, want 200", status)
	}

	status, hdr, body := get(t, front, hostname, "/throw")
	if status != http.StatusInternalServerError || body != engine.FailedBody || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("an uncaught throw answered %d %q (%s), want the host's complete 500 %q", status, body, hdr.Get("Content-Type"), engine.FailedBody)
	}
	if strings.Contains(body, "boom") {
		t.Errorf("the host's 500 carries the tenant's error: %q", body)
	}

	status, hdr, body = get(t, front, "nobody.workers.takoform.localhost", "/")
	if status != http.StatusNotFound || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") || strings.Contains(body, "ep-") {
		t.Errorf("an unknown hostname answered %d %q, want the host's 404", status, body)
	}

	// Roll out v2: the same hostname answers the new code.
	v2 := version("v2")
	if _, err := e.Update(ctx, e.A1, deployment, map[string]any{
		"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v2.Metadata.Name)}},
	}); err != nil {
		t.Fatalf("roll out v2: %v", err)
	}
	a = waitFor(t, front, hostname, "v2")
	if a.Env["GREETING"] != "hello v2" {
		t.Errorf("after the rollout env.GREETING = %v, want v2's var", a.Env["GREETING"])
	}
	for range 20 {
		if status, _, body := get(t, front, hostname, "/"); status != http.StatusOK || !strings.Contains(body, `"answer":"v2"`) {
			t.Fatalf("after the switch a request answered %d %q, want v2", status, body)
		}
	}
}

// TestWithoutWorkerdTheIngressSaysWorkersDoNotRun: with no engine every
// ingress answer is the host's 503 saying so, with Retry-After, and
// /readyz stays ready with the data plane's state in its detail.
func TestWithoutWorkerdTheIngressSaysWorkersDoNotRun(t *testing.T) {
	h, front := startHost(t, hosttest.NoWorkerd)
	for _, name := range []string{"ep-0123456789abcdef.workers.takoform.localhost", "unknown.example.com"} {
		status, hdr, body := get(t, front, name, "/")
		if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, "workers do not run on this host") {
			t.Errorf("GET %s without workerd: %d %q (Retry-After %q), want the host's 503 saying workers do not run", name, status, body, hdr.Get("Retry-After"))
		}
	}
	resp, err := http.Get(h.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health host.Health
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	dp := health.Checks["dataplane"]
	if resp.StatusCode != http.StatusOK || health.Status != "ok" || dp.Status != "ok" || !strings.Contains(dp.Detail, "workers do not run") {
		t.Errorf("/readyz without workerd: %d %+v, want ready with the data plane's state in the dataplane detail", resp.StatusCode, health)
	}
}

// TestDeadShardIsRestarted kills a tenant's workerd: the shard is started
// again from desired state and the worker answers again, from a new
// process (spec/runtime-v1.md §0.3).
func TestDeadShardIsRestarted(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploy(t, e, "alive")
	waitFor(t, front, hostname, "alive")
	pid := h.Runtime.Processes()["tenant-a"]
	if pid == 0 {
		t.Fatalf("no shard process for tenant-a: %v", h.Runtime.Processes())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, front, hostname, "alive")
	if again := h.Runtime.Processes()["tenant-a"]; again == 0 || again == pid {
		t.Errorf("after SIGKILL of %d the shard's process is %d, want a new one", pid, again)
	}
}

// deploy creates a worker answering label with one version, deployment
// and endpoint, and returns the endpoint's hostname.
func deploy(t *testing.T, e *conformance.Env, label string) string {
	t.Helper()
	_, hostname, _ := deployApp(t, e, e.A1, workerSource(label), nil, true)
	return hostname
}

// TestSilentShardIsKilledAndRestarted stops a tenant's workerd (SIGSTOP):
// it misses its watchdog, is killed and started again from desired state
// (spec/runtime-v1.md §10.3).
func TestSilentShardIsKilledAndRestarted(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploy(t, e, "awake")
	waitFor(t, front, hostname, "awake")
	pid := h.Runtime.Processes()["tenant-a"]
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	deadline := time.Now().Add(60 * time.Second)
	for h.Runtime.Processes()["tenant-a"] == pid || h.Runtime.Processes()["tenant-a"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the stopped shard %d was never replaced", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, front, hostname, "awake")
	if err := syscall.Kill(pid, 0); err == nil {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
			t.Errorf("the silent shard %d is still alive after its replacement", pid)
		}
	}
}

func sleep() { time.Sleep(100 * time.Millisecond) }
