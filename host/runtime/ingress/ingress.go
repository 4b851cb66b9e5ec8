// Package ingress is the data plane's front (spec/runtime-v1.md §9.1): it
// takes a request's canonical hostname, asks the runtime for the version
// drawn by weight, and proxies the request full duplex to that version's
// workerd socket; otherwise it answers the host's fixed 404, 503 or 504
// (§10.8).
package ingress

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime"
)

// HeadTimeout is how long a worker may take to send its response head
// before the client gets the host's 504 (spec/runtime-v1.md §10.3).
const HeadTimeout = 100 * time.Second

// BodyIdleTimeout is how long a worker's response body may send nothing
// before the ingress aborts it (spec/runtime-v1.md §10.3): the client then
// sees its connection cut mid-body, never a body that silently ends.
const BodyIdleTimeout = 120 * time.Second

// Resolver routes a canonical hostname (runtime.Runtime.Resolve).
type Resolver interface {
	Resolve(host string) (*runtime.Target, runtime.Outcome, string)
}

// Handler is the ingress http.Handler.
type Handler struct {
	Routes Resolver
	Log    *slog.Logger
	// Scheme is the inbound scheme the worker's request.url carries:
	// "https" (default) or "http" for a plain loopback listener.
	Scheme string
	// HeadTimeout overrides HeadTimeout when positive.
	HeadTimeout time.Duration
	// BodyIdleTimeout overrides BodyIdleTimeout when positive.
	BodyIdleTimeout time.Duration
	// Metrics, when set, counts every request per worker (NewMetrics).
	Metrics *Metrics
	// Hostname, when set, routes every request as this canonical hostname
	// whatever its Host: the test-only loopback listener of
	// spec/runtime-v1.md §10.1, for runners that accept only a loopback IP.
	Hostname string
}

// canonicalHost is the request's hostname as spec/runtime-v1.md §9.1 (1) defines it: Host
// (or :authority) without its port, lowercased, no trailing dot; "" when
// it is no hostname.
func canonicalHost(r *http.Request) string {
	h := r.Host
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	c, err := edge.CanonicalHostname(strings.TrimSuffix(h, "."))
	if err != nil {
		return ""
	}
	return c
}

// workerOf is implemented by a Resolver that can name the worker of a
// hostname it does not route (runtime.Runtime.WorkerOf), for the metrics
// and log line of the host's own 503s.
type workerOf interface {
	WorkerOf(host string) (runtime.Worker, bool)
}

// ServeHTTP routes one request and writes its one request-log line:
// host, worker, version, status, duration and request id (and the reason
// of a host-generated answer), counted in Metrics.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	id := requestID()
	host := canonicalHost(r)
	if h.Hostname != "" {
		host = h.Hostname
	}
	var (
		who     *runtime.Worker
		version string
		status  int
		reason  string
		level   = slog.LevelInfo
	)
	defer func() {
		d := time.Since(start)
		h.Metrics.observe(who, status, d)
		attrs := []any{"request_id", id, "host", host, "method", r.Method, "status", status, "duration", d}
		if who != nil {
			attrs = append(attrs, "tenant", who.Tenant, "worker", who.Space+"/"+who.Name, "version", version)
		}
		if reason != "" {
			attrs = append(attrs, "reason", reason)
		}
		log.Log(r.Context(), level, "ingress", attrs...)
	}()
	if st, body := limited(r); st != 0 {
		status, reason = st, "request over a limit"
		h.answer(w, log, status, body)
		return
	}
	t, outcome, why := h.Routes.Resolve(host)
	if t == nil {
		if wo, ok := h.Routes.(workerOf); ok {
			if x, found := wo.WorkerOf(host); found {
				who = &x
			}
		}
	}
	switch outcome {
	case runtime.UnknownHost:
		status, reason = http.StatusNotFound, why
		h.answer(w, log, status, bodyUnknownHost)
		return
	case runtime.NoEngine:
		status, reason, level = http.StatusServiceUnavailable, why, slog.LevelWarn
		h.answer(w, log, status, bodyNoEngine)
		return
	case runtime.NotRunnable:
		status, reason, level = http.StatusServiceUnavailable, why, slog.LevelWarn
		h.answer(w, log, status, bodyNotRunnable)
		return
	}
	who, version = &t.Who, t.Worker
	// Full duplex: the head may leave while the request body is still
	// open (spec/runtime-v1.md §2.3 S3); HTTP/2 is always full duplex.
	if err := http.NewResponseController(w).EnableFullDuplex(); err != nil && r.ProtoMajor == 1 {
		log.Debug("ingress: full duplex unavailable", "err", err)
	}
	scheme := h.Scheme
	if scheme == "" {
		scheme = "https"
	}
	timeout := h.HeadTimeout
	if timeout <= 0 {
		timeout = HeadTimeout
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &capped{body: r.Body, left: MaxRequestBytes}
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = host
			pr.Out.Host = pr.In.Host
			if h.Hostname != "" {
				pr.Out.Host = h.Hostname
			}
			pr.Out.Header.Set("X-Forwarded-Proto", scheme)
			pr.Out.Header.Del("Forwarded")
			pr.Out.Header.Del("X-Forwarded-For")
			pr.Out.Header.Del("X-Forwarded-Host")
		},
		Transport:     headTimeout{t.Transport, timeout},
		FlushInterval: -1, // every chunk at once (spec/runtime-v1.md §2.3)
		BufferPool:    buffers,
		ModifyResponse: func(resp *http.Response) error {
			status = resp.StatusCode
			idle := h.BodyIdleTimeout
			if idle <= 0 {
				idle = BodyIdleTimeout
			}
			resp.Body = newIdleBody(resp.Body, idle)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			level, reason = slog.LevelWarn, "worker not reached: "+err.Error()
			switch {
			case errors.Is(err, errHeadTimeout):
				status = http.StatusGatewayTimeout
				h.answer(w, log, status, bodyTimeout)
			case errors.Is(err, errTooLarge):
				status = http.StatusRequestEntityTooLarge
				h.answer(w, log, status, bodyTooLarge)
			case r.Context().Err() != nil:
				status = 499 // the client went away; nothing to answer
			default:
				status = http.StatusServiceUnavailable
				h.answer(w, log, status, bodyUnreachable)
			}
		},
	}
	p.ServeHTTP(w, r)
}

// requestID is a new request id: 16 hex digits.
func requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// answer writes a host-generated answer, logging a failed write.
func (h *Handler) answer(w http.ResponseWriter, log *slog.Logger, status int, body string) {
	if err := answer(w, status, body); err != nil {
		log.Debug("ingress: answer not delivered", "status", status, "err", err)
	}
}

var errHeadTimeout = errors.New("the worker sent no response head in time")

// limited is the host's answer to a request over an inbound limit (a
// declared body over MaxRequestBytes, a URL over MaxURLBytes, too many or
// too long headers), or 0 when it is within them.
func limited(r *http.Request) (int, string) {
	if r.ContentLength > MaxRequestBytes {
		return http.StatusRequestEntityTooLarge, bodyTooLarge
	}
	if len(r.RequestURI) > MaxURLBytes {
		return http.StatusRequestURITooLong, bodyURITooLong
	}
	n := 0
	for _, vs := range r.Header {
		for _, v := range vs {
			n++
			if len(v) > MaxHeaderValue {
				return http.StatusRequestHeaderFieldsTooLarge, bodyHeaders
			}
		}
	}
	if n > MaxHeaders {
		return http.StatusRequestHeaderFieldsTooLarge, bodyHeaders
	}
	return 0, ""
}

var errTooLarge = errors.New("the request body exceeds the inbound limit")

// capped fails a body of unknown length once it passes the limit, so the
// worker's request.body errors (spec/runtime-v1.md §6).
type capped struct {
	body io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.body.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

func (c *capped) Close() error { return c.body.Close() }

// headTimeout bounds the wait for the response head only; the body then
// streams for as long as it flows.
type headTimeout struct {
	rt      http.RoundTripper
	timeout time.Duration
}

func (h headTimeout) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	timer := time.AfterFunc(h.timeout, func() { cancel(errHeadTimeout) })
	resp, err := h.rt.RoundTrip(r.WithContext(ctx))
	if !timer.Stop() {
		if err != nil {
			cancel(nil)
			return nil, errHeadTimeout
		}
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelBody{resp.Body, cancel}
	return resp, nil
}

type cancelBody struct {
	body interface {
		Read([]byte) (int, error)
		Close() error
	}
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Read(p []byte) (int, error) { return b.body.Read(p) }
func (b *cancelBody) Close() error {
	err := b.body.Close()
	b.cancel(nil)
	return err
}

var errBodyIdle = errors.New("the worker's response body sent nothing for too long")

// idleBody fails a response body that sends nothing for idle: a timer,
// re-armed by every read that returns bytes, closes the body so the
// pending read fails and the proxy aborts the client's connection.
type idleBody struct {
	body  io.ReadCloser
	timer *time.Timer
	idle  time.Duration
	fired chan struct{}
	// closeErr is what closing the body on the timer returned; written
	// before fired is closed, read after.
	closeErr error
	once     sync.Once // the timer may fire again if re-armed as it fires
}

func newIdleBody(body io.ReadCloser, idle time.Duration) *idleBody {
	b := &idleBody{body: body, idle: idle, fired: make(chan struct{})}
	b.timer = time.AfterFunc(idle, func() {
		b.once.Do(func() {
			b.closeErr = body.Close() // unblocks the pending Read
			close(b.fired)
		})
	})
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	select {
	case <-b.fired:
		return n, errors.Join(errBodyIdle, b.closeErr)
	default:
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.body.Close()
}
