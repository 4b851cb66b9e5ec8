package host

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/wire"
)

// operator is the host's operator layer: request ids, the access log,
// metrics, health, and the admission limits (limits.go). Every request
// passes through ServeHTTP before it reaches a route.
type operator struct {
	metrics  *metrics
	inFlight chan struct{} // a slot per admitted request (Limits.MaxInFlight)
	tenants  *tenantLimiter
	shutdown atomic.Bool
}

func (s *Server) initOperator() error {
	l, err := s.cfg.Limits.withDefaults(s.cfg.SyncBudget)
	if err != nil {
		return err
	}
	s.cfg.Limits = l
	s.cfg.Retention = s.cfg.Retention.withDefaults(s.cfg.IdempotencyTTL)
	s.ops.metrics = newMetrics(s.cfg.Store)
	s.ops.metrics.reg.MustRegister(s.cfg.Collectors...)
	s.ops.inFlight = make(chan struct{}, l.MaxInFlight)
	s.ops.tenants = newTenantLimiter(l.TenantRate, l.TenantBurst)
	return nil
}

// exchange is what one request tells the access log and the metrics: its
// id (the Takoform-Request-Id header and the envelope's requestId), the
// route pattern that answered, the caller, the taxonomy code of a refusal
// and, for a replayed refusal, the request id its recorded body carries.
type exchange struct {
	id       string
	start    time.Time
	route    string
	caller   Caller
	code     wire.Code
	replayOf string
}

// exchangeOf returns the exchange of the request w answers: the one
// ServeHTTP made, or a fresh one for a handler reached another way (the
// metrics listener's, a route called directly).
func exchangeOf(w http.ResponseWriter) *exchange {
	if rec, ok := w.(*recorder); ok {
		return &rec.x
	}
	return &exchange{id: newRequestID(), start: time.Now(), route: routeUnmatched}
}

// requestOf returns the request a route is handed for r answered on w,
// with w's exchange; through ServeHTTP the first is the recorder's own.
func requestOf(w http.ResponseWriter, r *http.Request) *request {
	x := exchangeOf(w)
	if rec, ok := w.(*recorder); ok && rec.req.Request == nil {
		rec.req = request{Request: r, id: x.id, x: x}
		return &rec.req
	}
	return &request{Request: r, id: x.id, x: x}
}

// routeUnmatched is the route label of a request no pattern answered.
const routeUnmatched = "unmatched"

// recorder is the writer ServeHTTP hands on: it remembers the status a
// handler wrote, and holds the request's exchange and the request its
// route is handed, so a request costs one allocation of the operator
// layer's (PERFORMANCE.md, log entry "The host's CPU per exact read"). Unwrap lets
// http.ResponseController reach the connection (blob deadlines).
type recorder struct {
	http.ResponseWriter
	status int
	x      exchange
	req    request
	hv     headerValues
}

// headerValues hands out one-value header slices from one array, so the
// headers of an answer cost no allocation each. Keys must be canonical.
type headerValues struct {
	buf [5]string // Takoform-Request-Id and the four of Server.write
	n   int
}

// set sets h[key] to the one value v.
func (hv *headerValues) set(h http.Header, key, v string) {
	if hv.n == len(hv.buf) {
		h[key] = []string{v}
		return
	}
	hv.buf[hv.n] = v
	h[key] = hv.buf[hv.n : hv.n+1 : hv.n+1]
	hv.n++
}

// headerValuesOf returns w's header values: the recorder's, or fresh ones.
func headerValuesOf(w http.ResponseWriter) *headerValues {
	if rec, ok := w.(*recorder); ok {
		return &rec.hv
	}
	return new(headerValues)
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP implements http.Handler: it gives the request its id
// (Takoform-Request-Id on every answer), admits it (limits.go), serves it,
// then counts it and writes its one access-log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, x: exchange{id: newRequestID(), start: time.Now(), route: routeUnmatched}}
	x := &rec.x
	rec.hv.set(w.Header(), wire.HeaderRequestID, x.id)
	m := s.ops.metrics
	m.inFlight.Inc()
	defer func() {
		m.inFlight.Dec()
		s.finish(r, rec, x)
	}()
	if err := checkHeaderSize(r, s.cfg.Limits.MaxHeaderBytes); err != nil {
		s.writeError(rec, requestOf(rec, r), err)
		return
	}
	if isOperatorPath(r.URL.Path) {
		s.mux.ServeHTTP(rec, r) // health and metrics are never throttled
		return
	}
	if r.URL.Path == PathTail {
		s.route(rec, r) // a stream lasts: it holds no in-flight slot
		return
	}
	select {
	case s.ops.inFlight <- struct{}{}:
		defer func() { <-s.ops.inFlight }()
	default:
		s.writeError(rec, requestOf(rec, r), wire.Errorf(wire.RateLimited,
			"the host is answering its limit of %d requests at once; retry after the Retry-After interval", cap(s.ops.inFlight)).WithHostCode("in_flight_limit"))
		return
	}
	s.route(rec, r)
}

// finish counts the request and writes its access-log line: method,
// route pattern, status, taxonomy code, duration, request id, tenant and
// principal (never the token) and, for a replay, the recorded body's id.
func (s *Server) finish(r *http.Request, rec *recorder, x *exchange) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	now := time.Now()
	d := now.Sub(x.start)
	s.ops.metrics.observeRequest(x.route, r.Method, status, d)
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	// The record goes to the handler directly: Logger.LogAttrs would walk
	// the stack for a source position no host handler prints.
	h := s.log.Handler()
	if !h.Enabled(r.Context(), level) {
		return
	}
	line := slog.NewRecord(now, level, "request", 0)
	line.AddAttrs(slog.String("method", r.Method), slog.String("route", x.route), slog.Int("status", status),
		slog.String("code", string(x.code)), slog.Duration("duration", d), slog.String("request", x.id),
		slog.String("tenant", x.caller.Tenant), slog.String("principal", x.caller.Principal))
	if x.replayOf != "" {
		line.AddAttrs(slog.String("replayOf", x.replayOf))
	}
	if err := h.Handle(r.Context(), line); err != nil {
		// The log's own writer failed: stderr is all that is left to say it.
		fmt.Fprintf(os.Stderr, "takoform host: access log: %v\n", err)
	}
}

// noteReplay records, for the access log, the code and request id of a
// replayed refusal's recorded envelope (its body is replayed as recorded).
func noteReplay(r *request, body []byte) {
	var env wire.ErrorEnvelope
	if len(body) == 0 || json.Unmarshal(body, &env) != nil || env.Error.RequestID == "" {
		return
	}
	r.x.code, r.x.replayOf = env.Error.Code, env.Error.RequestID
}

// BeginShutdown makes /readyz answer 503 from now on, so a load balancer
// stops sending new requests while in-flight ones finish.
func (s *Server) BeginShutdown() { s.ops.shutdown.Store(true) }

// InFlight is how many API requests are being answered now (health and
// metrics requests not included).
func (s *Server) InFlight() int { return len(s.ops.inFlight) }
