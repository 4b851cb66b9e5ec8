package host_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// serveWithTimeouts serves h's handler through Server.HTTPServer (the
// production timeouts) on a fresh loopback port.
func serveWithTimeouts(t *testing.T, h *hosttest.Host) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := h.Server.HTTPServer()
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// trickle sends a request whose body of n bytes arrives one byte per
// gap; it returns the parsed answer and how many body bytes were sent
// before the answer came.
func trickle(t *testing.T, addr, method, path, ctype string, n int, gap time.Duration) (*http.Response, int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", method, path, addr, hosttest.TokenA1, ctype, n)
	sent := make(chan int, 1)
	answered := make(chan struct{})
	go func() {
		i := 0
		defer func() { sent <- i }()
		for ; i < n; i++ {
			select {
			case <-answered:
				return
			case <-time.After(gap):
			}
			if _, err := conn.Write([]byte{'x'}); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, <-sent
}

// TestSlowBodyIsCutAndBlobsGetLonger: with the read timeout shortened to
// 1s and the write timeout left to its default, a JSON body trickled one
// byte per 200ms is cut at the read timeout and the client receives the
// body_timeout envelope, long before the body is complete; a blob upload
// trickled the same way past the read timeout is read whole under its own
// deadline, and one trickled past its own deadline is answered
// body_timeout too (its write deadline comes after its read deadline).
func TestSlowBodyIsCutAndBlobsGetLonger(t *testing.T) {
	blobTimeout := time.Minute
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) {
		c.Limits.ReadTimeout, c.Limits.BlobTimeout = time.Second, blobTimeout
	}})
	addr := serveWithTimeouts(t, h)
	resp, sent := trickle(t, addr, http.MethodPost, wire.V1alpha3.APIBase+"/resources/validate", wire.ContentTypeJSON, 100, 200*time.Millisecond)
	if e := envelopeOf(t, resp); e.Code != wire.InvalidArgument || e.HostCode != "body_timeout" || sent >= 100 {
		t.Fatalf("trickled JSON body: %+v after %d of 100 bytes", e, sent)
	}
	blob := wire.V1alpha3.APIBase + "/artifacts/uploads/up_unknown/blobs/sha256:" + strings.Repeat("0", 64)
	resp, sent = trickle(t, addr, http.MethodPut, blob, wire.ContentTypeOctets, 8, 200*time.Millisecond)
	if e := envelopeOf(t, resp); e.Code != wire.ArtifactMissing || sent != 8 {
		t.Fatalf("trickled blob: %+v after %d of 8 bytes; want the whole body read and judged", e, sent)
	}

	short := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) {
		c.Limits.ReadTimeout, c.Limits.BlobTimeout = time.Second, time.Second
	}})
	resp, sent = trickle(t, serveWithTimeouts(t, short), http.MethodPut, blob, wire.ContentTypeOctets, 100, 200*time.Millisecond)
	if e := envelopeOf(t, resp); e.Code != wire.InvalidArgument || e.HostCode != "body_timeout" || sent >= 100 {
		t.Fatalf("blob trickled past the blob timeout: %+v after %d of 100 bytes", e, sent)
	}
}

// TestTimeoutDefaultsAgree: the default write timeout outlasts the read
// timeout plus the sync budget, whatever those are set to, and a
// configured write timeout that does not is refused, naming all three.
func TestTimeoutDefaultsAgree(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{SyncBudget: 45 * time.Second})
	if hs := h.Server.HTTPServer(); hs.WriteTimeout <= hs.ReadTimeout+45*time.Second || hs.ReadTimeout != time.Minute {
		t.Fatalf("default read timeout %s and write timeout %s with a 45s sync budget; want 1m and more than 1m45s", hs.ReadTimeout, hs.WriteTimeout)
	}
	long := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) { c.Limits.ReadTimeout = 5 * time.Minute }})
	if hs := long.Server.HTTPServer(); hs.WriteTimeout <= 5*time.Minute+10*time.Second {
		t.Fatalf("write timeout %s under a 5m read timeout and the 10s sync budget", hs.WriteTimeout)
	}
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []host.Limits{{WriteTimeout: 5 * time.Second}, {WriteTimeout: 65 * time.Second}, {ReadTimeout: 2 * time.Second, WriteTimeout: 12 * time.Second}} {
		_, err = host.New(context.Background(), host.Config{Store: h.Store, Catalog: cat, SyncBudget: 10 * time.Second, Limits: l})
		if err == nil || !strings.Contains(err.Error(), "must exceed the read timeout") || !strings.Contains(err.Error(), "plus the sync budget 10s") {
			t.Errorf("write timeout %s, read timeout %s: %v", l.WriteTimeout, l.ReadTimeout, err)
		}
	}
}

// TestDeclaredBodyOverTheLimit: a Content-Length above the body limit is
// refused before any of the body is read; a client waiting on Expect:
// 100-continue gets the refusal at once instead of a 100 Continue, and
// never sends the body.
func TestDeclaredBodyOverTheLimit(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{MaxBodyBytes: 1024})
	addr := serveWithTimeouts(t, h)
	for _, expect := range []string{"", "Expect: 100-continue\r\n"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// a guard against a hang, not a speed goal: the refusal needs no body byte
		if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s/resources/validate HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1025\r\n%s\r\n",
			wire.V1alpha3.APIBase, addr, hosttest.TokenA1, expect)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%q: no answer before the body: %v", expect, err)
		}
		e := envelopeOf(t, resp)
		resp.Body.Close()
		if e.Code != wire.InvalidArgument || e.HostCode != "body_too_large" || !strings.Contains(e.Message, "declares a body of 1025 bytes") {
			t.Fatalf("%q: declared 1025 bytes over a 1024-byte limit: %d %+v", expect, resp.StatusCode, e)
		}
	}
}

// TestHeaderAndContentTypeRefusals: an oversize header and a non-JSON
// Content-Type on a JSON route answer invalid_argument in the envelope.
func TestHeaderAndContentTypeRefusals(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	req, _ := http.NewRequest(http.MethodGet, h.URL+wire.V1alpha3.APIBase+"/support/forms", nil)
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	req.Header.Set("X-Padding", strings.Repeat("p", 100<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if e := envelopeOf(t, resp); e.Code != wire.InvalidArgument || e.HostCode != "headers_too_large" {
		t.Fatalf("100 KiB header: %d %+v", resp.StatusCode, e)
	}
	req, _ = http.NewRequest(http.MethodPost, h.URL+wire.V1alpha3.APIBase+"/resources/validate", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	req.Header.Set("Content-Type", "text/plain")
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if e := envelopeOf(t, resp2); e.Code != wire.InvalidArgument || e.HostCode != "content_type" {
		t.Fatalf("text/plain body: %+v", e)
	}
}

// TestInFlightLimit: with the limit at 1, a request arriving while another
// is being answered is refused rate_limited with Retry-After; health is
// still answered.
func TestInFlightLimit(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) { c.Limits.MaxInFlight = 1 }})
	addr := strings.TrimPrefix(h.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request whose body never completes holds the one slot.
	fmt.Fprintf(conn, "POST %s/resources/validate HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 10\r\n\r\n{", wire.V1alpha3.APIBase, addr, hosttest.TokenA1)
	for deadline := time.Now().Add(10 * time.Second); h.Server.InFlight() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held request never reached the host")
		}
	}
	resp, _ := get(t, h.URL+wire.V1alpha3.APIBase+"/support/forms", hosttest.TokenA1)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second request at the limit: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, _ := health(t, h.URL+"/readyz"); code != 200 {
		t.Fatalf("/readyz at the in-flight limit: %d", code)
	}
}

// TestTenantRateLimit: a tenant over its rate is answered rate_limited
// with a Retry-After in whole seconds; another tenant is not affected.
func TestTenantRateLimit(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) { c.Limits.TenantRate, c.Limits.TenantBurst = 0.01, 2 }})
	path := h.URL + wire.V1alpha3.APIBase + "/support/forms"
	for i := range 2 {
		if resp, _ := get(t, path, hosttest.TokenA1); resp.StatusCode != 200 {
			t.Fatalf("request %d within the burst: %d", i, resp.StatusCode)
		}
	}
	resp, body := get(t, path, hosttest.TokenA2) // same tenant, other principal
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 50 || !strings.Contains(string(body), `"rate_limited"`) {
		t.Fatalf("over the burst: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, _ := get(t, path, hosttest.TokenB); resp.StatusCode != 200 {
		t.Fatalf("another tenant: %d", resp.StatusCode)
	}
}
