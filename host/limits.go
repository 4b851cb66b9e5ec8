package host

import (
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// Limits are the host's admission limits and HTTP timeouts
// (spec/decisions/0010-operator-surface.md). Zero values take the defaults
// named on each field.
type Limits struct {
	// MaxInFlight caps API requests answered at once (default 512); one
	// more is answered rate_limited (429, Retry-After). Health and metrics
	// requests are not counted.
	MaxInFlight int
	// MaxHeaderBytes caps the request line and headers (default 64 KiB);
	// more is answered invalid_argument (hostCode headers_too_large).
	// HTTPServer lets net/http read up to 1 MiB so the envelope, not its
	// plain 431, answers everything in between.
	MaxHeaderBytes int
	// TenantRate is each tenant's sustained request rate, per second;
	// 0 (the default) turns the per-tenant limit off. TenantBurst is the
	// bucket size (default ceil(TenantRate)).
	TenantRate  float64
	TenantBurst int
	// HTTP timeouts of HTTPServer. ReadTimeout bounds reading a request
	// (headers and body; default 60s), WriteTimeout answering it, counted
	// from when its headers were read (default ReadTimeout + SyncBudget +
	// 30s; it must exceed ReadTimeout + SyncBudget, so a body cut at the
	// read timeout still gets its body_timeout refusal and a body read in
	// time its answer), IdleTimeout a keep-alive connection between
	// requests (default 120s). BlobTimeout replaces the read deadline of a
	// blob upload (default 10 min); its write deadline is as much later
	// as WriteTimeout is than ReadTimeout.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	BlobTimeout       time.Duration
}

// serverHeaderBytes is net/http's own header limit under HTTPServer.
const serverHeaderBytes = 1 << 20

func (l Limits) withDefaults(syncBudget time.Duration) (Limits, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = 512
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = 64 << 10
	}
	if l.MaxHeaderBytes > serverHeaderBytes {
		return l, fmt.Errorf("the header limit %d exceeds %d bytes; choose a smaller one", l.MaxHeaderBytes, serverHeaderBytes)
	}
	if l.TenantRate < 0 || math.IsNaN(l.TenantRate) || math.IsInf(l.TenantRate, 0) {
		return l, fmt.Errorf("the per-tenant rate %v must be a finite number ≥ 0 (0 turns it off)", l.TenantRate)
	}
	if l.TenantRate > 0 && l.TenantBurst <= 0 {
		l.TenantBurst = int(math.Ceil(l.TenantRate))
	}
	def(&l.ReadHeaderTimeout, 10*time.Second)
	def(&l.ReadTimeout, time.Minute)
	def(&l.WriteTimeout, l.ReadTimeout+syncBudget+30*time.Second)
	def(&l.IdleTimeout, 2*time.Minute)
	def(&l.BlobTimeout, 10*time.Minute)
	if err := checkWriteTimeout(l.WriteTimeout, l.ReadTimeout, syncBudget); err != nil {
		return l, err
	}
	return l, nil
}

// checkWriteTimeout refuses a write timeout that does not exceed the read
// timeout plus the sync budget. net/http counts the write deadline from
// when a request's headers were read and the read deadline from when the
// request began: with less, a body cut at the read timeout would never
// get its refusal written, and a mutation whose body arrived just in time
// would lose its answer.
func checkWriteTimeout(write, read, syncBudget time.Duration) error {
	if write <= read+syncBudget {
		return fmt.Errorf("the write timeout %s must exceed the read timeout %s plus the sync budget %s (%s), or the answer to a slow body is cut off unsent; raise the write timeout or lower the others", write, read, syncBudget, read+syncBudget)
	}
	return nil
}

// HTTPServer returns an http.Server serving s with the configured timeouts
// and header limit; the caller sets its address or listener (and TLS).
func (s *Server) HTTPServer() *http.Server {
	l := s.cfg.Limits
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    serverHeaderBytes,
	}
}

// checkHeaderSize refuses a request line plus headers larger than limit.
func checkHeaderSize(r *http.Request, limit int) error {
	n := len(r.Method) + len(r.RequestURI) + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	if n > limit {
		return wire.Errorf(wire.InvalidArgument, "the request line and headers take %d bytes, more than this host's limit of %d; send fewer or shorter headers", n, limit).WithHostCode("headers_too_large")
	}
	return nil
}

// admitTenant applies the per-tenant rate limit to an authenticated caller.
func (s *Server) admitTenant(c Caller) error {
	wait, ok := s.ops.tenants.admit(c.Tenant)
	if ok {
		return nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &retryAfter{wire.Errorf(wire.RateLimited, "tenant %q is sending requests faster than this host's limit of %g per second; retry after %d s", c.Tenant, s.cfg.Limits.TenantRate, secs).WithHostCode("tenant_rate_limit"), secs}
}

// retryAfter is a retryable refusal with its own Retry-After (seconds).
type retryAfter struct {
	err  *wire.Error
	secs int
}

func (e *retryAfter) Error() string { return e.err.Error() }
func (e *retryAfter) Unwrap() error { return e.err }

// bodyLimit is the largest body a route reads, in bytes: MaxBodyBytes,
// or for a blob upload as much as a whole bundle when that is more.
func (s *Server) bodyLimit(blob bool) int64 {
	if blob && ArtifactLimits.MaximumBundleBytes > s.cfg.MaxBodyBytes {
		return ArtifactLimits.MaximumBundleBytes
	}
	return s.cfg.MaxBodyBytes
}

// bodyTooLarge is the refusal of a body over limit: declared by its
// Content-Length (refused before a byte of it is read, so an Expect:
// 100-continue client is answered at once and sends nothing), or found
// while reading (declared < 0).
func bodyTooLarge(declared, limit int64) error {
	if declared >= 0 {
		return wire.Errorf(wire.InvalidArgument, "the request declares a body of %d bytes (Content-Length), more than this host's limit of %d; send a smaller body", declared, limit).WithHostCode("body_too_large")
	}
	return wire.Errorf(wire.InvalidArgument, "the request body exceeds %d bytes; send a smaller body", limit).WithHostCode("body_too_large")
}

// admitBody checks what a route will read, before reading any of it: a
// declared Content-Length above limit is refused; a JSON route takes only
// application/json in UTF-8 (a body without Content-Type is taken as
// JSON); a blob upload gets its own, longer deadlines.
func (s *Server) admitBody(w http.ResponseWriter, r *http.Request, blob bool, limit int64) error {
	if r.ContentLength > limit {
		// The body is never read, so the connection ends with the answer
		// (net/http would otherwise wait to discard a small body first).
		w.Header().Set("Connection", "close")
		return bodyTooLarge(r.ContentLength, limit)
	}
	if blob {
		rc := http.NewResponseController(w)
		l := s.cfg.Limits
		read := time.Now().Add(l.BlobTimeout)
		for _, d := range []struct {
			set func(time.Time) error
			at  time.Time
		}{{rc.SetReadDeadline, read}, {rc.SetWriteDeadline, read.Add(l.WriteTimeout - l.ReadTimeout)}} {
			if err := d.set(d.at); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return fmt.Errorf("extend the blob upload deadline: %w", err)
			}
		}
		return nil
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil // absent: the body is judged as JSON by the route
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != wire.ContentTypeJSON {
		return wire.Errorf(wire.InvalidArgument, "this route takes a JSON body, sent with Content-Type: application/json; got %s", quoteBounded(ct)).WithHostCode("content_type")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return wire.Errorf(wire.InvalidArgument, "this route takes JSON in UTF-8 (RFC 8259 §8.1); Content-Type names charset %s: send the body as UTF-8 with Content-Type: application/json (charset=utf-8 or none)", quoteBounded(cs)).WithHostCode("content_type")
	}
	return nil
}

// bodyReadError names why a body could not be read: the read timeout cut
// it, or the connection failed.
func bodyReadError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return wire.Errorf(wire.InvalidArgument, "the request body did not arrive within this host's read timeout; send it faster or in smaller pieces").WithHostCode("body_timeout")
	}
	return wire.Errorf(wire.InvalidArgument, "the request body could not be read: %v", err)
}

// The bounds of what a refusal repeats of its input, in bytes: an
// envelope's message and each string of its details (a JSON pointer
// naming a member of any length), so an answer stays small whatever the
// request held (form bounds each diagnostic's message; specError and
// validate list at most wire.MaxDiagnostics).
const (
	maxMessageBytes = 2 << 10
	maxPointerBytes = 256
)

// boundError cuts we's message and string details to their bounds.
func boundError(we *wire.Error) {
	we.Message = form.Truncate(we.Message, maxMessageBytes)
	for k, v := range we.Details {
		if str, ok := v.(string); ok {
			we.Details[k] = form.Truncate(str, maxPointerBytes)
		}
	}
}

// tenantLimiter holds one token bucket per tenant (golang.org/x/time/rate);
// nil buckets when the limit is off. Tenants are few (they come from the
// tokens file), so the map is bounded.
type tenantLimiter struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	by    map[string]*rate.Limiter
}

func newTenantLimiter(perSecond float64, burst int) *tenantLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &tenantLimiter{rate: rate.Limit(perSecond), burst: burst, by: map[string]*rate.Limiter{}}
}

// admit takes a token for tenant, or says how long until one is free.
func (t *tenantLimiter) admit(tenant string) (time.Duration, bool) {
	if t == nil {
		return 0, true
	}
	t.mu.Lock()
	l, ok := t.by[tenant]
	if !ok {
		l = rate.NewLimiter(t.rate, t.burst)
		t.by[tenant] = l
	}
	t.mu.Unlock()
	now := time.Now()
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}
