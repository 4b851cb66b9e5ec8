package host

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/takoform/takoform/host/store"
)

// metrics are the host's Prometheus metrics (spec/decisions/0010-operator-surface.md),
// each Server with its own registry. Labels hold route patterns, methods,
// status codes and sweep kinds only: never a tenant, principal, token,
// name or id, so cardinality is fixed by the route table.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // route, method, code
	latency  *prometheus.HistogramVec // route, method; seconds
	inFlight prometheus.Gauge
	commit   prometheus.Histogram   // seconds per durable commit
	batch    prometheus.Histogram   // Update calls per commit
	swept    *prometheus.CounterVec // kind
	children sync.Map               // requestLabels → requestSeries
}

func newMetrics(st store.Store) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_http_requests_total", Help: "Host API requests answered, by route pattern, method and HTTP status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "takoform_http_request_duration_seconds", Help: "Time to answer a Host API request, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "takoform_http_requests_in_flight", Help: "Requests being answered now.",
		}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "takoform_store_commit_duration_seconds", Help: "Time of one durable store commit (begin to fsync).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "takoform_store_commit_batch_size", Help: "Update calls answered by one durable commit (group commit).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		}),
		swept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_retention_deleted_total", Help: "Rows the retention sweeper deleted, by kind.",
		}, []string{"kind"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.inFlight, m.commit, m.batch, m.swept,
		storeGauges{st}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o, ok := st.(store.Observable); ok {
		o.ObserveCommits(m)
	}
	return m
}

// ObserveCommit implements store.CommitObserver.
func (m *metrics) ObserveCommit(latency time.Duration, batch int) {
	m.commit.Observe(latency.Seconds())
	m.batch.Observe(float64(batch))
}

// knownMethods bounds the method label; anything else counts as "other".
var knownMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodDelete: true}

func (m *metrics) observeRequest(route, method string, status int, d time.Duration) {
	if !knownMethods[method] {
		method = "other"
	}
	k := requestLabels{route, method, status}
	c, ok := m.children.Load(k)
	if !ok {
		// One lookup per label set, then kept: the route table bounds them.
		c, _ = m.children.LoadOrStore(k, requestSeries{
			m.requests.WithLabelValues(route, method, strconv.Itoa(status)), m.latency.WithLabelValues(route, method)})
	}
	ser, ok := c.(requestSeries)
	if !ok {
		panic("host metrics: a request series map entry is not a requestSeries") // only requestSeries are stored
	}
	ser.count.Inc()
	ser.latency.Observe(d.Seconds())
}

// requestLabels are the labels of one request's series; requestSeries
// are its counter and histogram.
type requestLabels struct {
	route, method string
	status        int
}

type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// storeGauges reads the store's gauges (store.Stats) at scrape time.
type storeGauges struct{ st store.Store }

var (
	descPending = prometheus.NewDesc("takoform_operations_pending", "Accepted operations not yet terminal.", nil, nil)
	descIdem    = prometheus.NewDesc("takoform_idempotency_records", "Stored idempotency replay records.", nil, nil)
	descBytes   = prometheus.NewDesc("takoform_artifact_bytes", "Bytes of stored artifact blobs.", nil, nil)
	descUp      = prometheus.NewDesc("takoform_store_up", "1 when the store answered the last scrape's gauge query, else 0.", nil, nil)
)

func (g storeGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPending
	ch <- descIdem
	ch <- descBytes
	ch <- descUp
}

func (g storeGauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var st store.Stats
	err := g.st.View(ctx, func(tx store.Tx) error {
		var err error
		st, err = tx.Stats()
		return err
	})
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(st.PendingOperations))
	ch <- prometheus.MustNewConstMetric(descIdem, prometheus.GaugeValue, float64(st.IdempotencyRecords))
	ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, float64(st.ArtifactBytes))
}

// MetricsHandler serves the host's metrics in the Prometheus text format
// on GET and HEAD (any other method answers 405 with Allow: GET, HEAD),
// refusing headers over Limits.MaxHeaderBytes as every route does; it is
// also served at /metrics on the API handler unless
// Config.MetricsElsewhere.
func (s *Server) MetricsHandler() http.Handler {
	h := promhttp.HandlerFor(s.ops.metrics.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkHeaderSize(r, s.cfg.Limits.MaxHeaderBytes); err != nil {
			s.writeError(w, requestOf(w, r), err)
			return
		}
		if s.readOnly(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}
