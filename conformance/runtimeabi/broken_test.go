package runtimeabi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance/runtimeabi"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// brokenProbe is our probe made to show what a runtime breaking each
// behaviour would show: a fetch called with two arguments (6), a changed
// response (7), a 500 whose body errors (8), an extra env name (9), a
// missing global (10), KV bytes read back as text (11, as workerd's native
// KV does; spec/runtime-v1.md §0.3), the service routes answered by the
// caller itself (14, 15), waitUntil tasks run inline (16), scheduled
// recording another cron (17) and a batch another attempt count (18).
func brokenProbe(t *testing.T) []byte {
	t.Helper()
	src := string(runtimeabi.ProbeSource)
	for _, r := range []struct{ from, to string }{
		{"        argumentCount,\n", "        argumentCount: 2,\n"},
		{`return answer(200, { ok: true });`, `return answer(200, { ok: true, extra: true });`},
		{`throw new Error("takoform runtime probe: a deliberate uncaught throw");`,
			`{
      let n = 0;
      return new Response(new ReadableStream({ async pull(c) { if (n++ === 0) { c.enqueue(enc.encode("half")); return; } await sleep(100); c.error(new Error("cut")); } }), { status: 500 });
    }`},
		{`propertyNames: Object.keys(env).sort()`, `propertyNames: [...Object.keys(env), "EXTRA"].sort()`},
		{`const PROBE = "takoform.runtime-abi-probe@v1";`, `const PROBE = "takoform.runtime-abi-probe@v1";
globalThis.structuredClone = undefined;`},
		{`toBase64(bytesOf(v))`, `toBase64(enc.encode(dec.decode(bytesOf(v))))`},
		{`return env.PEER.fetch(peerURL(request, "echo-stream"), { method: "POST", body: request.body, duplex: "half" });`, `return echoStream(request);`},
		{`return env.PEER.fetch(peerURL(request, "stream"));`, `return stream(url);`},
		{"      ctx.waitUntil(\n", "      await inline(\n"},
		{"const sleep =", "const inline = (p) => p.catch(() => {});\nconst sleep ="},
		{`JSON.stringify({ cron: event.cron,`, `JSON.stringify({ cron: "0 * * * *",`},
		{`attempts: message.attempts,`, `attempts: message.attempts + 1,`},
	} {
		if !strings.Contains(src, r.from) {
			t.Fatalf("the probe no longer contains %q", r.from)
		}
		src = strings.ReplaceAll(src, r.from, r.to)
	}
	return []byte(src)
}

// bufferingFront is a broken host front: it reads the whole request body
// before proxying (no full duplex) and holds the whole response until the
// worker ends it (no flush), spec/runtime-v1.md §2.3 S2–S4.
func bufferingFront(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// TestRuntimeChecksFailOnBrokenHosts shows every check 6–18 able to fail
// against a real host: our probe's broken variant fails 6–11 and 14–18;
// a front that buffers bodies fails 12–15 with our own probe.
func TestRuntimeChecksFailOnBrokenHosts(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	h := hosttest.Start(t, hosttest.Options{Workerd: enginetest.Binary(t), Logger: log, Events: fastMinutes})
	good := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, Log: log})
	t.Cleanup(good.Close)
	buffering := httptest.NewServer(bufferingFront(&ingress.Handler{Routes: h.Runtime, Log: log}))
	t.Cleanup(buffering.Close)
	ctx := context.Background()
	fast := func(w *runtimeabi.Worker) *runtimeabi.Run {
		return runtimeabi.NewRun(runtimeabi.Options{Worker: w, Wait: 2 * time.Second, Poll: 3 * time.Second})
	}
	expect := func(name string, run *runtimeabi.Run, failing map[int]bool) {
		for _, c := range runtimeabi.Checks {
			if c.Number < 6 {
				continue
			}
			r := run.Check(ctx, c)
			want := runtimeabi.Passed
			if failing[c.Number] {
				want = runtimeabi.Failed
			}
			if r.Outcome != want {
				t.Errorf("%s: check %d %s %s, want %s (%s)", name, c.Number, c.ID, r.Outcome, want, r.Detail)
			} else if want == runtimeabi.Failed {
				t.Logf("%s: check %d fails as it must: %s", name, c.Number, r.Detail)
			}
		}
	}

	_, w := deploy(t, h, good, hosttest.TokenA1, runtimeabi.DeployOptions{Probe: brokenProbe(t)})
	expect("broken probe", fast(w), map[int]bool{6: true, 7: true, 8: true, 9: true, 10: true, 11: true, 14: true, 15: true, 16: true, 17: true, 18: true})

	d, _ := deploy(t, h, good, hosttest.TokenB, runtimeabi.DeployOptions{})
	wb, err := runtimeabi.NewWorker(d.URL, strings.TrimPrefix(buffering.URL, "http://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	expect("buffering front", fast(wb), map[int]bool{12: true, 13: true, 14: true, 15: true})
}
