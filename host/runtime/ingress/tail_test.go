package ingress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// loggingSource logs on every method of console, throws on /throw and
// rejects a waitUntil task on /reject.
const loggingSource = `export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    console.log("hello from", path, { n: 1 });
    console.warn("careful");
    if (path === "/throw") throw new RangeError("boom");
    if (path === "/reject") ctx.waitUntil(Promise.reject(new SyntaxError("later")));
    return new Response("ok");
  },
};
`

// deployLogging deploys loggingSource behind an endpoint and returns the
// environment, the worker's name and its hostname.
func deployLogging(t *testing.T, h *hosttest.Host) (*conformance.Env, string, string) {
	t.Helper()
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	worker, hostname, url := deployApp(t, e, e.A1, []byte(loggingSource), nil, true)
	if url != "https://"+hostname+"/" {
		t.Errorf("the endpoint's url output is %q, want https://%s/ (no port, never http)", url, hostname)
	}
	return e, worker, hostname
}

// openTail opens GET PathTail as token; the response is the caller's.
func openTail(t *testing.T, ctx context.Context, h *hosttest.Host, token, space, worker string) *http.Response {
	t.Helper()
	q := url.Values{"space": {space}, "worker": {worker}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+host.PathTail+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestTailStreamsConsoleAndExceptions: a tail of a worker on real workerd
// receives its console calls and its uncaught throw and rejected task as
// JSON lines naming the worker and version; another tenant's tail of the
// same name finds no worker (spec/runtime-v1.md §2.1).
func TestTailStreamsConsoleAndExceptions(t *testing.T) {
	binary := enginetest.Binary(t)
	h, front := startHost(t, binary)
	e, name, hostname := deployLogging(t, h)
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

	cb, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenB})
	if err != nil {
		t.Fatal(err)
	}
	var we *wire.Error
	if _, err := cb.Tail(context.Background(), e.Space, name, ""); !errors.As(err, &we) || we.Code != wire.ResourceNotFound {
		t.Fatalf("another tenant's tail: %v, want resource_not_found", err)
	}
	if resp := openTail(t, context.Background(), h, hosttest.TokenA1, e.Space, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a tail without a worker name answered %d, want 400", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ca, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := ca.Tail(ctx, e.Space, name, "")
	if err != nil {
		t.Fatalf("tail: %v", err)
	}
	defer stream.Close()
	for _, p := range []string{"/one", "/throw", "/reject"} {
		get(t, front, hostname, p)
	}
	want := map[string]bool{"console log hello from /one {\"n\":1}": false, "console warn careful": false, "exception RangeError boom": false, "exception SyntaxError later": false}
	sc := bufio.NewScanner(stream)
	for sc.Scan() {
		var r runtime.TailRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("a tail line is not a record: %q", sc.Text())
		}
		if r.Worker.Name != name || r.Worker.Space != e.Space || r.Worker.UID == "" || r.Worker.Group == "" || r.Version == "" || r.Event != "fetch" || r.Time.IsZero() {
			t.Errorf("record %s does not name the worker, version, event and time", sc.Text())
		}
		k := r.Kind + " " + r.Level + " " + r.Message
		if r.Kind == "exception" {
			k = r.Kind + " " + r.Name + " " + r.Message
		}
		if _, ok := want[k]; ok {
			want[k] = true
		}
		done := true
		for _, seen := range want {
			done = done && seen
		}
		if done {
			return
		}
	}
	t.Fatalf("the tail ended (%v) before every record came: %v", sc.Err(), want)
}
