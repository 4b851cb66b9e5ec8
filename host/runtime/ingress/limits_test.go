package ingress_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/hosttest"
)

// TestInboundLimits: a declared body over 104857600 bytes, a URL over 8192
// bytes, more than 128 headers or a header value over 8192 bytes get the
// host's 413, 414 and 431 before any routing (spec/runtime-v1.md §6).
func TestInboundLimits(t *testing.T) {
	_, front := startHost(t, hosttest.NoWorkerd)
	send := func(mutate func(*http.Request)) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "ep-0123456789abcdef.workers.takoform.localhost"
		mutate(req)
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A declared length is answered before any byte of the body is sent.
	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: ep-0123456789abcdef.workers.takoform.localhost\r\nContent-Length: 104857601\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a declared body of 104857601 bytes: %d, want the host's 413", resp.StatusCode)
	}
	for _, c := range []struct {
		what   string
		mutate func(*http.Request)
		want   int
	}{
		{"a URL of 8193 bytes", func(r *http.Request) { r.URL.Path = "/" + strings.Repeat("a", 8192) }, http.StatusRequestURITooLong},
		{"129 headers", func(r *http.Request) {
			for i := range 129 {
				r.Header.Set("X-H"+strconv.Itoa(i), "v")
			}
		}, http.StatusRequestHeaderFieldsTooLarge},
		{"a header value of 8193 bytes", func(r *http.Request) { r.Header.Set("X-Big", strings.Repeat("v", 8193)) }, http.StatusRequestHeaderFieldsTooLarge},
		{"a request within every limit", func(r *http.Request) { r.Header.Set("X-Big", strings.Repeat("v", 8192)) }, http.StatusServiceUnavailable},
	} {
		status, body := send(c.mutate)
		if status != c.want || !strings.HasPrefix(body, strconv.Itoa(c.want)+" ") {
			t.Errorf("%s: %d %q, want the host's %d", c.what, status, body, c.want)
		}
	}
}
