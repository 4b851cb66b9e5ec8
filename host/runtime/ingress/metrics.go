package ingress

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/takoform/takoform/host/runtime"
)

// Metrics are the ingress's per-worker Prometheus metrics
// (handbook/workers-observability.md). Labels: tenant, space, worker (the
// ModuleWorker's name) and, on requests, the status class (2xx … 5xx):
// one series set per routed worker, so cardinality grows with the
// workers a host routes (about 10 series per worker), never with
// hostnames, paths or versions. Requests to no worker count in
// takoform_ingress_unrouted_total by status only.
type Metrics struct {
	requests *prometheus.CounterVec   // tenant, space, worker, class
	errors   *prometheus.CounterVec   // tenant, space, worker
	duration *prometheus.HistogramVec // tenant, space, worker; seconds
	unrouted *prometheus.CounterVec   // code
}

// NewMetrics makes the ingress's metrics; register Collectors.
func NewMetrics() *Metrics {
	w := []string{"tenant", "space", "worker"}
	return &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_worker_requests_total", Help: "Requests the ingress answered for a worker, by tenant, space, worker name and status class (2xx, 3xx, 4xx, 5xx), host-generated answers included.",
		}, append(w, "class")),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_worker_errors_total", Help: "Requests answered 5xx for a worker (its own, or the host's 500, 503 and 504), by tenant, space and worker name.",
		}, w),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "takoform_worker_request_duration_seconds", Help: "Time from a request's arrival to the end of its answer's body, by tenant, space and worker name.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 100},
		}, w),
		unrouted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_ingress_unrouted_total", Help: "Requests the ingress answered without a worker (unknown hostname, no engine, over a limit), by status code.",
		}, []string{"code"}),
	}
}

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.errors, m.duration, m.unrouted}
}

// observe counts one answered request.
func (m *Metrics) observe(w *runtime.Worker, status int, d time.Duration) {
	if m == nil {
		return
	}
	if w == nil {
		m.unrouted.WithLabelValues(strconv.Itoa(status)).Inc()
		return
	}
	class := "5xx"
	if status >= 100 && status < 500 {
		class = strconv.Itoa(status/100) + "xx"
	}
	m.requests.WithLabelValues(w.Tenant, w.Space, w.Name, class).Inc()
	if status >= 500 {
		m.errors.WithLabelValues(w.Tenant, w.Space, w.Name).Inc()
	}
	m.duration.WithLabelValues(w.Tenant, w.Space, w.Name).Observe(d.Seconds())
}
