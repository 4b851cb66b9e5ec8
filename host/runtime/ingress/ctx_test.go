package ingress_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/syncbuf"
)

// ctxWorker shows the ctx its handler receives.
const ctxWorker = `let previous = null;
export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    if (path === "/keys") return Response.json(Object.keys(ctx).sort());
    if (path === "/many") {
      for (let i = 0; i < 1000; i++) ctx.waitUntil(Promise.resolve(i));
      try { ctx.waitUntil(Promise.resolve()); return new Response("accepted 1001"); }
      catch (e) { return new Response(e.name); }
    }
    if (path === "/reject") {
      ctx.waitUntil(Promise.reject(new Error("task failed on purpose")));
      return new Response("answered");
    }
    if (path === "/hang") {
      ctx.waitUntil(new Promise(() => {}));
      return new Response("answered");
    }
    if (path === "/keep") { previous = ctx; return new Response("kept"); }
    if (path === "/expired") {
      try { previous.waitUntil(Promise.resolve()); return new Response("accepted"); }
      catch (e) { return new Response(e.name); }
    }
    return new Response("no route", { status: 404 });
  },
};
`

// TestContextIsTheHosts: the ctx a worker's handler gets is the host's
// (spec/runtime-v1.md §2.4): exactly waitUntil and passThroughOnException;
// the 1001st task throws RangeError; a rejected task leaves the response
// alone and is reported; a task pending past the ceiling (shortened here)
// is let go and reported; waitUntil on an ended invocation's ctx throws
// context_expired.
func TestContextIsTheHosts(t *testing.T) {
	old := engine.WaitUntilCeiling
	engine.WaitUntilCeiling = time.Second
	t.Cleanup(func() { engine.WaitUntilCeiling = old })
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testLog{t}), nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(front.Close)
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploySource(t, e, []byte(ctxWorker))
	var keys []string
	waitJSONAt(t, front, hostname, "/keys", &keys)
	if strings.Join(keys, ",") != "passThroughOnException,waitUntil" {
		t.Errorf("Object.keys(ctx) = %v, want exactly passThroughOnException and waitUntil", keys)
	}
	for path, want := range map[string]string{"/many": "RangeError", "/reject": "answered", "/hang": "answered", "/keep": "kept"} {
		if status, body := do(t, front, http.MethodGet, hostname, path, nil); status != http.StatusOK || body != want {
			t.Errorf("GET %s answered %d %q, want 200 %q", path, status, body, want)
		}
	}
	time.Sleep(200 * time.Millisecond) // the kept invocation's tasks (none) settled
	if status, body := do(t, front, http.MethodGet, hostname, "/expired", nil); status != http.StatusOK || body != "context_expired" {
		t.Errorf("waitUntil on an ended invocation's ctx answered %d %q, want context_expired", status, body)
	}
	for _, want := range []string{"task failed on purpose", "waitUntil_ceiling"} {
		for i := 0; !strings.Contains(logs.String(), want); i++ {
			if i == 100 {
				t.Errorf("the host log never reported %q", want)
				break
			}
			sleep()
		}
	}
}
