package host

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Operator paths: unauthenticated, outside the API base, never throttled
// (spec/decisions/0010-operator-surface.md).
const (
	pathLivez   = "/livez"
	pathReadyz  = "/readyz"
	pathMetrics = "/metrics"
)

func isOperatorPath(p string) bool { return p == pathLivez || p == pathReadyz || p == pathMetrics }

// Health is the body of /livez and /readyz: "ok" or "fail" overall and per
// check. It names no tenant and holds no tenant data.
type Health struct {
	Status string                 `json:"status"`
	Checks map[string]HealthCheck `json:"checks"`
}

// HealthCheck is one check's outcome; Detail says what failed.
type HealthCheck struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func (s *Server) operatorRoutes() {
	s.operatorRoute(pathLivez, func(*http.Request) Health {
		return Health{Checks: map[string]HealthCheck{"process": {Status: "ok"}}}
	})
	s.operatorRoute(pathReadyz, s.readiness)
	if !s.cfg.MetricsElsewhere {
		metricsHandler := s.MetricsHandler()
		s.mux.HandleFunc(pathMetrics, func(w http.ResponseWriter, r *http.Request) {
			exchangeOf(w).route = pathMetrics
			metricsHandler.ServeHTTP(w, r)
		})
	}
}

// readOnly answers a method other than GET and HEAD on an operator path
// itself and reports false: 405 with Allow: GET, HEAD and one plain line
// naming the fix. The lane's envelope cannot carry it: no code of the
// closed taxonomy has status 405 (wire.Taxonomy fixes each code's
// status), and these paths are outside the lane.
func (s *Server) readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	msg := fmt.Sprintf("%s answers GET and HEAD only, not %s; send GET\n", r.URL.EscapedPath(), quoteBounded(r.Method))
	h := w.Header()
	h.Set("Allow", "GET, HEAD")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(http.StatusMethodNotAllowed)
	s.writeBody(w, []byte(msg))
	return false
}

// operatorRoute serves a health document on GET and HEAD: 200 when every
// check is ok, else 503.
func (s *Server) operatorRoute(p string, check func(*http.Request) Health) {
	s.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
		exchangeOf(w).route = p
		if !s.readOnly(w, r) {
			return
		}
		h := check(r)
		h.Status = "ok"
		status := http.StatusOK
		for _, c := range h.Checks {
			if c.Status != "ok" {
				h.Status, status = "fail", http.StatusServiceUnavailable
			}
		}
		body := mustJSON(h)
		w.Header().Set("Content-Type", wire.ContentTypeJSON)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		if r.Method == http.MethodGet {
			s.writeBody(w, body)
		}
	})
}

// readiness: the store answers, its schema is the one this binary
// migrates to, and shutdown has not begun.
func (s *Server) readiness(r *http.Request) Health {
	checks := map[string]HealthCheck{}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var applied, known int64
	err := s.cfg.Store.View(ctx, func(tx store.Tx) error {
		var err error
		applied, known, err = tx.SchemaVersion()
		return err
	})
	switch {
	case err != nil:
		s.log.Warn("readiness: store unreachable", "err", err)
		checks["store"] = HealthCheck{Status: "fail", Detail: "the store did not answer; see the host log"}
		checks["migrations"] = HealthCheck{Status: "fail", Detail: "unknown while the store does not answer"}
	case applied != known:
		checks["store"] = HealthCheck{Status: "ok"}
		checks["migrations"] = HealthCheck{Status: "fail", Detail: fmt.Sprintf("schema version %d applied, this binary needs %d", applied, known)}
	default:
		checks["store"] = HealthCheck{Status: "ok"}
		checks["migrations"] = HealthCheck{Status: "ok", Detail: fmt.Sprintf("schema version %d", applied)}
	}
	if s.cfg.DataPlane != nil {
		checks["dataplane"] = HealthCheck{Status: "ok", Detail: s.cfg.DataPlane()}
	}
	if s.ops.shutdown.Load() {
		checks["shutdown"] = HealthCheck{Status: "fail", Detail: "the host is shutting down"}
	} else {
		checks["shutdown"] = HealthCheck{Status: "ok"}
	}
	return Health{Checks: checks}
}
