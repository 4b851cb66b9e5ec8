package runtimebench_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/gateway"
)

// kvSource is a worker over a KV binding named KV: /rw puts ?k=?v and
// reads it back in the same request (200 "ok" when the read returns the
// value); /put stores it; /get answers the stored value; / is hello world.
const kvSource = `const enc = new TextEncoder(), dec = new TextDecoder();
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const k = url.searchParams.get("k"), v = url.searchParams.get("v");
    switch (url.pathname) {
      case "/rw": {
        await env.KV.put(k, enc.encode(v));
        const got = await env.KV.get(k);
        const text = got === null ? null : dec.decode(got);
        return new Response(text === v ? "ok" : "read " + text, { status: text === v ? 200 : 500 });
      }
      case "/put":
        await env.KV.put(k, enc.encode(v));
        return new Response("stored");
      case "/get": {
        const got = await env.KV.get(k);
        return got === null ? new Response("absent", { status: 404 }) : new Response(got);
      }
    }
    return new Response("hello world\n");
  },
};
`

// kvCase is one measured round trip.
type kvCase struct {
	name string
	op   func() error
	lat  []time.Duration
}

// BenchmarkKVReadAfterWrite measures a KV read-after-write through a
// worker on its binding, one client at a time: a put and a get in one
// request (/rw), and a put in one request and a get in the next (/put then
// /get, timed from the first request's start to the second's end); every
// read must return the value just written. Beside them the floors of the
// same run: a hello-world request through the same ingress and worker
// (no binding call), and the binding gateway alone (the host's handler of
// the tenant's gateway socket, on a unix socket of its own over the same
// store): a PUT then a GET of the value, what the worker's two binding
// calls cost without workerd. BENCH_RUNTIME_KV_N round trips per case and
// round (default 300), BENCH_RUNTIME_ROUNDS rounds (default 3), order
// rotated.
func BenchmarkKVReadAfterWrite(b *testing.B) {
	n := envInt(b, "BENCH_RUNTIME_KV_N", 300)
	rounds := envInt(b, "BENCH_RUNTIME_ROUNDS", 3)
	r := startRig(b)
	kv := r.create("EdgeKVNamespace", "kv", map[string]any{})
	w := r.deploy(kvSource, kv)
	r.waitAnswer(w.hostname, "/", helloBody, 50*time.Millisecond)
	gw := gatewayFloor(b, r, kv.Metadata.UID)
	expect := func(status int, body string, err error, wantStatus int, want string) error {
		if err == nil && (status != wantStatus || body != want) {
			err = fmt.Errorf("answered %d %q, want %d %q", status, body, wantStatus, want)
		}
		return err
	}
	seq := 0
	key := func() (string, string) {
		seq++
		return "k" + strconv.Itoa(seq), "value-" + strconv.Itoa(seq)
	}
	cases := []*kvCase{
		{name: "put+get in one request", op: func() error {
			k, v := key()
			s, body, err := get(r.hc, r.front.URL, w.hostname, "/rw?k="+k+"&v="+v)
			return expect(s, body, err, 200, "ok")
		}},
		{name: "put, then get in the next", op: func() error {
			k, v := key()
			s, body, err := get(r.hc, r.front.URL, w.hostname, "/put?k="+k+"&v="+v)
			if err := expect(s, body, err, 200, "stored"); err != nil {
				return err
			}
			s, body, err = get(r.hc, r.front.URL, w.hostname, "/get?k="+k)
			return expect(s, body, err, 200, v)
		}},
		{name: "hello world, ingress (floor)", op: func() error {
			s, body, err := get(r.hc, r.front.URL, w.hostname, "/")
			return expect(s, body, err, 200, helloBody)
		}},
		{name: "gateway alone: PUT, GET (floor)", op: func() error {
			k, v := key()
			return gw.roundTrip(k, v)
		}},
	}
	header(fmt.Sprintf("KV read-after-write through a worker, one client, %d round trips per case in each of %d rounds (order rotated)", n, rounds))
	b.ResetTimer()
	for round := range rounds {
		for j := range cases {
			c := cases[(j+round)%len(cases)]
			for i := range n + 20 { // the first 20 warm up
				t0 := time.Now()
				if err := c.op(); err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
				if i >= 20 {
					c.lat = append(c.lat, time.Since(t0))
				}
			}
		}
	}
	b.StopTimer()
	fmt.Printf("   %-33s %10s %10s %10s\n", "round trip", "p50", "p99", "per second")
	for _, c := range cases {
		s := sample{lat: c.lat}
		slices.Sort(s.lat)
		var sum time.Duration
		for _, d := range c.lat {
			sum += d
		}
		fmt.Printf("   %-33s %10s %10s %10.0f\n", c.name, ms(s.pct(0.5)), ms(s.pct(0.99)), float64(len(c.lat))/sum.Seconds())
	}
	fmt.Printf("   load average at end: %s\n", loadavg())
}

// gwFloor is the binding gateway served alone on a unix socket.
type gwFloor struct {
	c   *http.Client
	uid string
}

// gatewayFloor serves a gateway over the rig's store for tenant-a on a
// unix socket of its own, as the shard's gateway socket is served.
func gatewayFloor(b *testing.B, r *rig, uid string) *gwFloor {
	g := gateway.New(r.h.Store, b.TempDir(), nil)
	b.Cleanup(func() { _ = g.Close() })
	sock := filepath.Join(b.TempDir(), "gw.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: g.ForTenant("tenant-a")}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.Error(err)
		}
	}()
	b.Cleanup(func() { _ = srv.Close() })
	return &gwFloor{c: &http.Client{Transport: engine.UnixTransport(sock)}, uid: uid}
}

func (g *gwFloor) do(method, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://gateway/kv/v1/value?key="+key, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set(gateway.BindingHeader, g.uid)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := g.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return resp.StatusCode, got, err
}

func (g *gwFloor) roundTrip(key, value string) error {
	status, body, err := g.do(http.MethodPut, key, []byte(value))
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("gateway PUT answered %d %q", status, body)
	}
	if err != nil {
		return err
	}
	status, body, err = g.do(http.MethodGet, key, nil)
	if err == nil && (status != 200 || string(body) != value) {
		err = fmt.Errorf("gateway GET answered %d %q, want %q", status, body, value)
	}
	return err
}
