// Package host is the Takoform host: the Host API server (spec/host-api-v1alpha3.md
// §2–§5, §8.1) answering lanes v1alpha3 and v1beta1 as views of one plane
// (spec/lane-v1beta1.md §2.5, lanes.go) over a transactional store. Server is an http.Handler;
// Config holds every host setting.
package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Config holds the host settings. Zero values take the documented defaults.
type Config struct {
	Store store.Store
	// Catalog is every installed Form, Interface and Binding, keyed by
	// exact ref host-wide; Lanes is what each lane answers of it
	// (LoadFamilies returns both; spec/lane-v1beta1.md §2.5). Without
	// Lanes, SplitLanes places Catalog: one family on its lane, or a
	// catalog of both Edge groups (BuiltinFamilies') split by group.
	Catalog *form.Catalog
	Lanes   LaneSets
	Tokens  []Token
	// Family supplies family semantics (Edge rules); nil means none.
	Family Family
	// MaxBodyBytes limits request bodies (default wire.MaxBodyBytes).
	MaxBodyBytes int64
	// SyncBudget is how long a mutation may take before it answers 202
	// with an operation; ProvisioningDelay is an artificial delay before a
	// mutation can commit. A delay above the budget makes every mutation
	// asynchronous (tests and demos use it on purpose).
	SyncBudget        time.Duration
	ProvisioningDelay time.Duration
	// IdempotencyTTL expires replay records by age (default 24h).
	IdempotencyTTL time.Duration
	// PublicURL, when set, is the origin discovery advertises
	// ("https://host.example[:port]", no path): the host behind a proxy or
	// load balancer. Empty advertises the request's Host with the
	// connection's scheme (spec/host-api-v1alpha3.md §2.1, decision
	// spec/decisions/0008-deployable-host.md).
	PublicURL string
	// Probe enables the test-only Takoform-Conformance-Probe header; the
	// caller must only set it for a loopback listener.
	Probe  bool
	Logger *slog.Logger
	// Limits, Retention and Quotas are the operator settings of limits.go,
	// sweeper.go and the lifecycle engine's quotas (host/lifecycle); zero
	// values take their documented defaults.
	Limits    Limits
	Retention Retention
	Quotas    Quotas
	// MetricsElsewhere keeps /metrics off this handler: the operator serves
	// MetricsHandler on a separate listener (--metrics-listen).
	MetricsElsewhere bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Committed, when set, is called with the key of each resource a
	// committed mutation changed (apply, import, delete, observe, an
	// operation's commit); it must return at once (the data plane's
	// reconcile hook, spec/runtime-v1.md §9.4).
	Committed func(k store.Key)
	// DataPlane, when set, reports the data plane's state, shown in
	// /readyz's "dataplane" check detail; that check is always ok, so
	// /readyz's status keeps meaning the control plane.
	DataPlane func() string
	// DataSweep, when set, runs with every Sweep: it removes what the data
	// plane keeps for deleted resources and expired entries (at most limit
	// expired entries a run) and returns what it removed by kind, counted
	// in takoform_retention_deleted_total (host/runtime/gateway's
	// Gateway.Sweep).
	DataSweep func(ctx context.Context, limit int) (map[string]int, error)
	// Tail, when set, serves PathTail (tail.go): it opens the tail of the
	// caller's worker named by space, name and Form group ("" for the
	// default) — a worker the tenant does not hold is ErrNoWorker — and
	// returns the stream, which hands each record (one JSON value) to emit
	// until ctx ends or emit fails.
	Tail func(ctx context.Context, tenant, space, name, group string) (stream func(emit func(record any) error) error, err error)
	// Collectors are more Prometheus collectors served on /metrics (the
	// ingress's per-worker metrics, host/runtime/ingress).
	Collectors []prometheus.Collector
	// LoadCheck, when set, is the data plane's engine load check
	// (host/runtime's LoadCheck): with the Edge family, it decides a
	// WorkerVersion's exported handlers and load refusals at apply, import
	// and 202 commit, never at validate or prepare (spec/runtime-v1.md
	// §1.3, §1.4); nil leaves the static check.
	LoadCheck artifact.LoadCheck
	// Migrations, when set, is the data plane's migration executor
	// (host/runtime/gateway's Gateway.ApplyMigrations): with the Edge
	// family, committing a v1beta1 SQLiteMigrationApplication runs the
	// set's unapplied files on the database's own file, then the store
	// ledger follows (spec/runtime-v1.md §9.3; repo decision 0057). Nil
	// keeps the control-plane ledger only (spec/lane-v1beta1.md §6.7).
	Migrations Migrations
	// Secrets, when set, serves the secret route (wire.SecretsBase,
	// spec/runtime-v1.md §3.2); without it the route refuses with
	// unsupported_capability.
	Secrets Secrets
}

// Server serves the Host API.
type Server struct {
	cfg     Config
	auth    *authenticator
	mux     *http.ServeMux
	engine  *lifecycle.Engine // commits mutations and settles operations
	log     *slog.Logger
	wake    chan struct{}
	stop    chan struct{}
	stopped sync.WaitGroup
	ops     operator    // health, metrics, limits (operator.go)
	lanes   []*laneView // every lane served, in wire.Lanes order
}

// New builds a Server and starts its operation worker; Close stops it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Catalog == nil {
		return nil, errors.New("host: a store and a catalog are required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = wire.MaxBodyBytes
	}
	if cfg.SyncBudget <= 0 {
		cfg.SyncBudget = 10 * time.Second
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = 24 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Family == nil {
		cfg.Family = NoFamily{}
	}
	if f, ok := cfg.Family.(*edgehost.Family); ok && (cfg.LoadCheck != nil || cfg.Migrations != nil) {
		withEngine := *f // the caller's family stays as it was
		if cfg.LoadCheck != nil {
			withEngine.LoadCheck = cfg.LoadCheck
		}
		if cfg.Migrations != nil {
			withEngine.Migrate = migrator(cfg.Migrations)
		}
		cfg.Family = &withEngine
	}
	if cfg.Lanes == nil {
		sets, err := SplitLanes(cfg.Catalog)
		if err != nil {
			return nil, err
		}
		cfg.Lanes = sets
	}
	if cfg.Probe {
		// The probe's second group is no Edge group: every lane
		// (spec/lane-v1beta1.md §14).
		cat, err := withProbeForms(cfg.Catalog)
		if err != nil {
			return nil, err
		}
		cfg.Catalog = cat
		sets := LaneSets{}
		for _, l := range wire.Lanes {
			if sets[l.Name], err = withProbeForms(cfg.Lanes[l.Name]); err != nil {
				return nil, err
			}
		}
		cfg.Lanes = sets
	}
	lanes, err := laneViews(cfg.Catalog, cfg.Lanes)
	if err != nil {
		return nil, err
	}
	s := &Server{lanes: lanes, cfg: cfg, auth: newAuthenticator(cfg.Tokens), log: cfg.Logger, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	secret, err := s.loadSecret(ctx)
	if err != nil {
		return nil, err
	}
	s.engine = lifecycle.New(lifecycle.Config{Catalog: cfg.Catalog, Family: cfg.Family, Quotas: cfg.Quotas, Secret: secret, Now: cfg.Now})
	if err := s.initOperator(); err != nil {
		return nil, err
	}
	s.routes()
	s.secretRoutes()
	s.operatorRoutes()
	s.stopped.Add(2)
	go s.worker()
	go s.sweeper()
	return s, nil
}

// Close stops the operation worker; it does not close the store.
func (s *Server) Close() error {
	close(s.stop)
	s.stopped.Wait()
	return nil
}

// route serves one request once the operator layer (ServeHTTP in
// operator.go) has admitted it. A path that is not canonical (empty, "."
// or ".." segments) is an unknown route answered in the envelope, never
// the mux's HTML redirect.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p {
		s.writeError(w, requestOf(w, r), unknownRoute(r))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// answer is what a route produced: status, ETag, body (nil for no body)
// and optional Retry-After seconds.
type answer struct {
	status     int
	etag       string
	body       []byte
	retryAfter int
}

// request is one authenticated request.
type request struct {
	*http.Request
	lane   *laneView // the lane whose route answers; nil outside the lanes
	caller Caller
	id     string
	x      *exchange // what the access log and metrics are told (operator.go)
	body   []byte
	idem   *idemContext // set on idempotent routes
	// bodyChecked: body passed ijson.Check (bodySpace), so decodeRequest
	// does not check it again.
	bodyChecked bool
}

type route func(r *request) (answer, error)

// handle registers one path pattern with a route per method; any other
// method on the path is an unknown route.
func (s *Server) handle(pattern string, auth bool, methods map[string]route) {
	s.handleLane(nil, pattern, auth, methods)
}

// handleLane is handle for a route of lane ln's endpoint table: the
// request it hands on knows its lane.
func (s *Server) handleLane(ln *laneView, pattern string, auth bool, methods map[string]route) {
	wild := wildcards(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, hr *http.Request) {
		req := requestOf(w, hr)
		req.lane = ln
		x := req.x
		h, ok := methods[hr.Method]
		if !ok {
			s.writeError(w, req, unknownRoute(hr))
			return
		}
		x.route = pattern
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic", "request", req.id, "panic", p)
				s.writeError(w, req, wire.Errorf(wire.InternalError, "the host failed while answering; request %s", req.id))
			}
		}()
		if auth {
			c, err := s.auth.authenticateRequest(hr.Header)
			if err != nil {
				s.writeError(w, req, err)
				return
			}
			req.caller, x.caller = c, c
			if err := s.admitTenant(c); err != nil {
				s.writeError(w, req, err)
				return
			}
		}
		if err := checkText(hr, pattern, wild); err != nil {
			s.writeError(w, req, err)
			return
		}
		blob := strings.HasSuffix(pattern, "/blobs/{digest}")
		limit := s.bodyLimit(blob)
		if err := s.admitBody(w, hr, blob, limit); err != nil {
			s.writeError(w, req, err)
			return
		}
		if hr.Body == nil || hr.Body == http.NoBody {
			req.body = []byte{} // what reading no body gives, without a read buffer
		} else {
			body, err := io.ReadAll(io.LimitReader(hr.Body, limit+1))
			if err != nil {
				s.writeError(w, req, bodyReadError(err))
				return
			}
			if int64(len(body)) > limit {
				s.writeError(w, req, bodyTooLarge(-1, limit))
				return
			}
			req.body = body
		}
		ans, err := h(req)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		s.write(w, ans)
	})
}

// The headers write sets, in canonical form (TestHeaderKeysCanonical).
const (
	headerETag          = "Etag"
	headerRetryAfter    = "Retry-After"
	headerContentType   = "Content-Type"
	headerContentLength = "Content-Length"
)

func (s *Server) write(w http.ResponseWriter, a answer) {
	h, hv := w.Header(), headerValuesOf(w)
	if a.etag != "" {
		hv.set(h, headerETag, a.etag)
	}
	if a.retryAfter > 0 {
		hv.set(h, headerRetryAfter, strconv.Itoa(a.retryAfter))
	}
	if a.body != nil {
		hv.set(h, headerContentType, wire.ContentTypeJSON)
		hv.set(h, headerContentLength, strconv.Itoa(len(a.body)))
	}
	w.WriteHeader(a.status)
	if a.body != nil {
		s.writeBody(w, a.body)
	}
}

// writeBody sends an answer's body; once the status is out a failed write
// (the caller went away) can only be logged.
func (s *Server) writeBody(w http.ResponseWriter, body []byte) {
	if _, err := w.Write(body); err != nil {
		s.log.Debug("answer not delivered", "err", err)
	}
}

// errorAnswer renders any error as an envelope answer.
func (s *Server) errorAnswer(req *request, err error) answer {
	var we *wire.Error
	switch {
	case errors.As(err, &we):
	case errors.Is(err, store.ErrUnavailable):
		// A lost database connection is retryable, never a 500; the
		// store's error names the database without its password.
		s.log.Warn("store unavailable", "request", req.id, "err", err)
		we = wire.Errorf(wire.BackendUnavailable, "the host's database is unavailable (request %s); retry later: a mutation sent again with the same Idempotency-Key replays its answer if it committed", req.id)
	default:
		s.log.Error("internal error", "request", req.id, "err", err)
		we = wire.Errorf(wire.InternalError, "the host failed while answering; report request %s to the host operator", req.id)
	}
	we.RequestID = req.id
	boundError(we)
	req.x.code = we.Code
	body := mustJSON(we.Envelope())
	a := answer{status: we.Status(), body: body}
	if wire.Taxonomy[we.Code].Retryable {
		a.retryAfter = 1
	}
	if ra := (*retryAfter)(nil); errors.As(err, &ra) {
		a.retryAfter = ra.secs
	}
	return a
}

func (s *Server) writeError(w http.ResponseWriter, req *request, err error) {
	s.write(w, s.errorAnswer(req, err))
}

// newRequestID returns a fresh request id, "req-" + 16 hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := [4 + 2*len(b)]byte{'r', 'e', 'q', '-'}
	hex.Encode(id[4:], b[:])
	return string(id[:])
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	return b
}

func jsonAnswer(status int, v any) answer { return answer{status: status, body: mustJSON(v)} }

// randomHex returns n random bytes in hex (2n digits): the random part of
// an upload id.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
