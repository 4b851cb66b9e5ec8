package host_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/syncbuf"
	"github.com/takoform/takoform/wire"
)

// syncBuffer is the host's log sink in these tests.
type syncBuffer = syncbuf.Buffer

// jsonLog decodes the JSON log lines written so far; a line that is not
// JSON fails the test.
func jsonLog(t *testing.T, b *syncBuffer) []map[string]any {
	t.Helper()
	lines, bad := b.JSONLines()
	if len(bad) > 0 {
		t.Fatalf("log line is not JSON: %q", bad[0])
	}
	return lines
}

func withJSONLog(buf *syncBuffer) func(*host.Config) {
	return func(c *host.Config) { c.Logger = slog.New(slog.NewJSONHandler(buf, nil)) }
}

func get(t *testing.T, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func health(t *testing.T, url string) (int, host.Health) {
	t.Helper()
	resp, b := get(t, url, "")
	var h host.Health
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("%s answered %d %q, not a health document", url, resp.StatusCode, b)
	}
	return resp.StatusCode, h
}

// TestHealthEndpoints: /livez and /readyz answer without credentials;
// readiness checks the store and its schema and fails (503) once shutdown
// has begun, when a migration is not applied, or when the store is gone,
// while liveness stays 200.
func TestHealthEndpoints(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	if code, l := health(t, h.URL+"/livez"); code != 200 || l.Status != "ok" {
		t.Fatalf("/livez = %d %+v", code, l)
	}
	code, r := health(t, h.URL+"/readyz")
	if code != 200 || r.Status != "ok" || r.Checks["store"].Status != "ok" || r.Checks["migrations"].Status != "ok" || r.Checks["shutdown"].Status != "ok" {
		t.Fatalf("/readyz of a fresh host = %d %+v", code, r)
	}
	h.Server.BeginShutdown()
	if code, r := health(t, h.URL+"/readyz"); code != 503 || r.Status != "fail" || r.Checks["shutdown"].Status != "fail" {
		t.Fatalf("/readyz after BeginShutdown = %d %+v", code, r)
	}
	if code, _ := health(t, h.URL+"/livez"); code != 200 {
		t.Fatalf("/livez after BeginShutdown = %d, want 200 (the process lives)", code)
	}

	h3 := hosttest.Start(t, hosttest.Options{})
	db, err := sql.Open("sqlite", "file:"+h3.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM goose_db_version WHERE version_id = (SELECT MAX(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	if code, r := health(t, h3.URL+"/readyz"); code != 503 || r.Checks["migrations"].Status != "fail" || !strings.Contains(r.Checks["migrations"].Detail, "this binary needs") {
		t.Fatalf("/readyz with a migration unapplied = %d %+v", code, r)
	}

	h2 := hosttest.Start(t, hosttest.Options{})
	h2.Store.Close()
	if code, r := health(t, h2.URL+"/readyz"); code != 503 || r.Checks["store"].Status != "fail" || strings.Contains(r.Checks["store"].Detail, "tenant") {
		t.Fatalf("/readyz with the store closed = %d %+v", code, r)
	}
}

// TestMetricsExposition: /metrics answers without credentials in the
// Prometheus format, counts requests by route pattern, method and status,
// reports the store's commits and gauges, and no label names a tenant or
// carries a token. With MetricsElsewhere the API listener does not serve it.
func TestMetricsExposition(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	if a := put(t, h, c, kvRequest(t, c, "metered"), "key-metered", ""); a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	resp, b := get(t, h.URL+"/metrics", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(b)
	for _, want := range []string{
		`takoform_http_requests_total{code="201",method="PUT",route="` + wire.V1alpha3.APIBase + `/resources/{group}/{version}/{kind}/{name}"} 1`,
		`takoform_http_request_duration_seconds_bucket{method="POST",route="` + wire.V1alpha3.APIBase + `/resources/prepare"`,
		"takoform_http_requests_in_flight 1", // this scrape
		"takoform_operations_pending 0",
		"takoform_idempotency_records 1",
		"takoform_artifact_bytes 0",
		"takoform_store_commit_duration_seconds_count",
		"takoform_store_commit_batch_size_bucket",
		"takoform_store_up 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, secret := range []string{"tenant-a", "principal-1", hosttest.TokenA1, "metered"} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics names %q", secret)
		}
	}

	apart := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) { c.MetricsElsewhere = true }})
	if resp, _ := get(t, apart.URL+"/metrics", ""); resp.StatusCode != 404 {
		t.Fatalf("/metrics on the API listener with MetricsElsewhere = %d, want 404", resp.StatusCode)
	}
}

// TestRequestIDsAndAccessLog: every answer carries Takoform-Request-Id,
// equal to the envelope's requestId; each request writes one log line with
// method, route pattern, status, code, request id, tenant and principal and
// never the token; a replayed refusal keeps its recorded body and its log
// line names both ids.
func TestRequestIDsAndAccessLog(t *testing.T) {
	var logs syncBuffer
	h := hosttest.Start(t, hosttest.Options{Configure: withJSONLog(&logs)})
	target := h.URL + wire.V1alpha3.APIBase + "/resources/edge.forms.takoform.com/v1alpha1/EdgeKVNamespace/absent?space=s&group=edge.forms.takoform.com%2Fv1alpha1&kind=EdgeKVNamespace&definitionVersion=0.1.0&schemaDigest=sha256:" + strings.Repeat("0", 64)
	del := func() (*http.Response, wire.ErrorBody) {
		req, _ := http.NewRequest(http.MethodDelete, target, nil)
		req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
		req.Header.Set(wire.HeaderIdempotency, "k-absent")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp, envelopeOf(t, resp)
	}
	first, e1 := del()
	id1 := first.Header.Get(wire.HeaderRequestID)
	if id1 == "" || e1.RequestID != id1 {
		t.Fatalf("header %q, envelope requestId %q: want equal and non-empty", id1, e1.RequestID)
	}
	second, e2 := del()
	id2 := second.Header.Get(wire.HeaderRequestID)
	if id2 == "" || id2 == id1 || e2.RequestID != id1 || e2.Code != e1.Code {
		t.Fatalf("replay: header %q, envelope %+v; want a fresh header id and the recorded envelope of %s", id2, e2, id1)
	}
	if resp, _ := get(t, h.URL+"/livez", ""); resp.Header.Get(wire.HeaderRequestID) == "" {
		t.Fatal("/livez has no Takoform-Request-Id")
	}

	byID := map[string]map[string]any{}
	for _, l := range jsonLog(t, &logs) {
		if l["msg"] == "request" {
			byID[l["request"].(string)] = l
		}
	}
	l1, l2 := byID[id1], byID[id2]
	if l1 == nil || l2 == nil {
		t.Fatalf("no log line for %s or %s:\n%s", id1, id2, logs.String())
	}
	want := map[string]any{"method": "DELETE", "route": wire.V1alpha3.APIBase + "/resources/{group}/{version}/{kind}/{name}", "tenant": "tenant-a", "principal": "principal-1", "code": string(e1.Code), "status": float64(first.StatusCode)}
	for k, v := range want {
		if l1[k] != v || l2[k] != v {
			t.Errorf("log %s = %v / %v, want %v", k, l1[k], l2[k], v)
		}
	}
	if _, ok := l1["duration"]; !ok {
		t.Error("log line has no duration")
	}
	if l2["replayOf"] != id1 || l1["replayOf"] != nil {
		t.Errorf("replayOf = %v (replay) / %v (first), want %s / none", l2["replayOf"], l1["replayOf"], id1)
	}
	if strings.Contains(logs.String(), hosttest.TokenA1) {
		t.Error("the log holds the bearer token")
	}
}
