package ingress_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestIdleResponseBodyIsAborted: a worker whose response body sends one
// line and then nothing has its body aborted once it is idle for the
// ingress's body idle timeout (spec/runtime-v1.md §10.3, here shortened):
// the client reads the line, then a failed read — never a body that
// silently ends as if complete.
func TestIdleResponseBodyIsAborted(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testLog{t}, nil))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log})
	front := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log, BodyIdleTimeout: 500 * time.Millisecond})
	t.Cleanup(front.Close)
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploySource(t, e, []byte(`export default {
  async fetch(request, env, ctx) {
    const { readable, writable } = new TransformStream();
    const w = writable.getWriter();
    w.write(new TextEncoder().encode("first line\n"));
    // the rest comes 20 s later: alive, but idle far past the timeout
    ctx.waitUntil(new Promise((done) => setTimeout(async () => {
      await w.write(new TextEncoder().encode("late line\n"));
      await w.close();
      done();
    }, 20000)));
    return new Response(readable);
  },
};
`))
	for i := 0; ; i++ {
		req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = hostname
		res, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			if i == 600 {
				t.Fatalf("the worker never answered 200 (last %d)", res.StatusCode)
			}
			sleep()
			continue
		}
		line, err := bufio.NewReader(res.Body).ReadString('\n')
		if err != nil || line != "first line\n" {
			t.Fatalf("first read = %q, %v", line, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(res.Body)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Error("the idle body ended as if complete, want a failed read")
			}
		case <-time.After(30 * time.Second):
			t.Error("the idle body was not aborted within 30 s")
		}
		res.Body.Close()
		return
	}
}
