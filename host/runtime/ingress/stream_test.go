package ingress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
	"github.com/takoform/takoform/internal/hosttest"
)

// streamWorker: a request with a body gets one line per read of it while
// the body is still open; one without, "ready"; /slow answers after 60 s.
const streamWorker = `export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/slow") { await new Promise((resolve) => setTimeout(resolve, 60000)); }
    if (request.body === null) return new Response("ready");
    if (url.pathname === "/whole") return new Response(String((await request.arrayBuffer()).byteLength));
    const reader = request.body.getReader();
    const enc = new TextEncoder();
    let total = 0, reads = 0;
    const body = new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) { controller.enqueue(enc.encode(JSON.stringify({ end: true, total }) + "\n")); controller.close(); return; }
        reads++; total += value.byteLength;
        controller.enqueue(enc.encode(JSON.stringify({ read: reads, total }) + "\n"));
      },
    });
    return new Response(body, { headers: { "content-type": "application/x-ndjson" } });
  },
};
`

// TestRequestBodyStreamsFullDuplex: the worker's response head and its
// account of the first 4096 bytes reach the client while the client still
// holds the rest of the body (spec/runtime-v1.md §2.3 S1–S3); a worker that
// sends no head gets the host's 504 (§10.3).
func TestRequestBodyStreamsFullDuplex(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploySource(t, e, []byte(streamWorker))
	waitBody(t, front, hostname, func(b string) bool { return b == "ready" })

	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, front.URL+"/echo", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = hostname
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := front.Client().Do(req)
		got <- result{resp, err}
	}()
	if _, err := pw.Write([]byte(strings.Repeat("x", 4096))); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		pw.CloseWithError(errors.New("gave up waiting for the response head"))
		t.Fatal("no response head within 30 s while the request body is open (full duplex missing?)")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.resp.Body.Close()
	lines := bufio.NewReader(r.resp.Body)
	seen := 0
	for seen < 4096 {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the worker's account before the rest of the body is sent: %v", err)
		}
		var l struct{ Read, Total int }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seen = l.Total
	}
	if _, err := pw.Write([]byte(strings.Repeat("y", 8192))); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(lines)
	if err != nil || !strings.Contains(string(rest), `{"end":true,"total":12288}`) {
		t.Errorf("after the whole body: %q (%v), want the end line with 12288 bytes", rest, err)
	}

	// A body of unknown length past 104857600 bytes errors the worker's
	// request.body; before the head the client gets the host's 413 (spec/runtime-v1.md §6).
	big, err := http.NewRequest(http.MethodPost, front.URL+"/whole", io.MultiReader(io.LimitReader(zeros{}, 104857601)))
	if err != nil {
		t.Fatal(err)
	}
	big.Host = hostname
	if resp, err := front.Client().Do(big); err != nil {
		t.Errorf("a body past the cap: %v, want the host's 413", err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of unknown length past the cap answered %d %q, want the host's 413", resp.StatusCode, b)
		}
	}

	slow := httptest.NewServer(&ingress.Handler{Routes: h.Runtime, HeadTimeout: 500 * time.Millisecond})
	defer slow.Close()
	status, _, body := get(t, slow, hostname, "/slow")
	if status != http.StatusGatewayTimeout || !strings.HasPrefix(body, "504 ") {
		t.Errorf("a worker sending no head answered %d %q, want the host's 504", status, body)
	}
}

// deploySource deploys a one-module worker from source with an endpoint
// and returns its hostname.
func deploySource(t *testing.T, e *conformance.Env, source []byte) string {
	t.Helper()
	_, hostname, _ := deployApp(t, e, e.A1, source, nil, true)
	return hostname
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
