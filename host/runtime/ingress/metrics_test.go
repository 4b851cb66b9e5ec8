package ingress_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
)

// syncBuffer is a log sink safe for the ingress's goroutines.
type syncBuffer struct {
	ch chan string
}

func (b syncBuffer) Write(p []byte) (int, error) {
	b.ch <- string(p)
	return len(p), nil
}

// TestIngressCountsAndLogsPerWorker: requests through the ingress to a
// worker on real workerd count per tenant, space and worker (a 500 of
// an uncaught throw as an error), a request to no worker counts as
// unrouted, and each request writes one log line with its host, worker,
// version, status, duration and request id.
func TestIngressCountsAndLogsPerWorker(t *testing.T) {
	binary := enginetest.Binary(t)
	h, front := startHost(t, binary)
	e, name, hostname := deployLogging(t, h)
	lines := syncBuffer{make(chan string, 1024)}
	m := ingress.NewMetrics()
	counted := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: slog.New(slog.NewTextHandler(lines, nil)), Metrics: m})
	defer counted.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if status, _, _ := get(t, front, hostname, "/warmup"); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never answered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range []string{"/a", "/b", "/throw"} {
		get(t, counted, hostname, p)
	}
	get(t, counted, "nobody.workers.takoform.localhost", "/")

	c := m.Collectors()
	expected := `
# HELP takoform_worker_requests_total Requests the ingress answered for a worker, by tenant, space, worker name and status class (2xx, 3xx, 4xx, 5xx), host-generated answers included.
# TYPE takoform_worker_requests_total counter
takoform_worker_requests_total{class="2xx",space="` + e.Space + `",tenant="tenant-a",worker="` + name + `"} 2
takoform_worker_requests_total{class="5xx",space="` + e.Space + `",tenant="tenant-a",worker="` + name + `"} 1
# HELP takoform_worker_errors_total Requests answered 5xx for a worker (its own, or the host's 500, 503 and 504), by tenant, space and worker name.
# TYPE takoform_worker_errors_total counter
takoform_worker_errors_total{space="` + e.Space + `",tenant="tenant-a",worker="` + name + `"} 1
# HELP takoform_ingress_unrouted_total Requests the ingress answered without a worker (unknown hostname, no engine, over a limit), by status code.
# TYPE takoform_ingress_unrouted_total counter
takoform_ingress_unrouted_total{code="404"} 1
`
	if err := testutil.CollectAndCompare(c[0], strings.NewReader(expected), "takoform_worker_requests_total"); err != nil {
		t.Error(err)
	}
	if err := testutil.CollectAndCompare(c[1], strings.NewReader(expected), "takoform_worker_errors_total"); err != nil {
		t.Error(err)
	}
	if err := testutil.CollectAndCompare(c[3], strings.NewReader(expected), "takoform_ingress_unrouted_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c[2], "takoform_worker_request_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1 (one worker)", n)
	}

	var all bytes.Buffer
	for len(lines.ch) > 0 {
		all.WriteString(<-lines.ch)
	}
	var n int
	for _, l := range strings.Split(strings.TrimSpace(all.String()), "\n") {
		if !strings.Contains(l, "msg=ingress ") {
			continue
		}
		n++
		for _, k := range []string{"request_id=", "host=", "status=", "duration="} {
			if !strings.Contains(l, k) {
				t.Errorf("request log line %q lacks %s", l, k)
			}
		}
		if strings.Contains(l, "host="+hostname) && (!strings.Contains(l, "worker=\""+e.Space+"/"+name+"\"") || !strings.Contains(l, "version=")) {
			t.Errorf("request log line %q lacks the worker or version", l)
		}
	}
	if n != 4 {
		t.Errorf("%d request log lines for 4 requests:\n%s", n, all.String())
	}
}
