package events

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/takoform/takoform/host/runtime"
)

// Metrics are the dispatcher's Prometheus metrics
// (handbook/events.md): cron firings by worker and outcome, and per
// queue its depth, the age of its oldest message, deliveries, retries,
// dead letters and drops. Labels: tenant, space and the worker's or
// queue's name, so series grow with triggers' workers and queues, never
// with messages.
type Metrics struct {
	firings    *prometheus.CounterVec // tenant, space, worker, outcome
	depth      *prometheus.GaugeVec   // tenant, space, queue
	oldest     *prometheus.GaugeVec   // tenant, space, queue; seconds
	deliveries *prometheus.CounterVec // tenant, space, queue
	batches    *prometheus.CounterVec // tenant, space, queue, outcome
	retries    *prometheus.CounterVec // tenant, space, queue
	dead       *prometheus.CounterVec // tenant, space, queue
	dropped    *prometheus.CounterVec // tenant, space, queue, reason
	leaseHeld  prometheus.Gauge       // 1 while this host holds the events lease
	takeovers  prometheus.Counter     // acquisitions of an epoch after the first
	fenced     *prometheus.CounterVec // write: firing, claim, batch
}

// NewMetrics makes the dispatcher's metrics; register Collectors.
func NewMetrics() *Metrics {
	q := []string{"tenant", "space", "queue"}
	return &Metrics{
		firings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_cron_firings_total",
			Help: "Settled cron firings by tenant, space, worker name and outcome: ok, failed (the handler threw or rejected), missed (recorded, no handler reached in its minute), lost (the dispatcher died mid-invocation), skipped (the previous invocation still ran).",
		}, []string{"tenant", "space", "worker", "outcome"}),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "takoform_queue_depth", Help: "Messages stored in a consumed queue, in flight included, by tenant, space and queue name.",
		}, q),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "takoform_queue_oldest_message_age_seconds", Help: "Age of a consumed queue's oldest message (0 when empty), by tenant, space and queue name.",
		}, q),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_queue_deliveries_total", Help: "Messages delivered to a queue handler (each delivery of a message counts), by tenant, space and queue name.",
		}, q),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_queue_batches_total", Help: "Batches by tenant, space, queue name and outcome: ok, failed (the handler threw or rejected), unknown (the dispatch broke off), unreached (no handler ran: its messages are deliverable again, attempts unchanged).",
		}, append(q, "outcome")),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_queue_retries_total", Help: "Messages returned for redelivery (explicitly or by a failed batch), by tenant, space and queue name.",
		}, q),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_queue_dead_letters_total", Help: "Exhausted messages moved to the consumer's dead-letter queue, by tenant, space and drained queue name.",
		}, q),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_queue_dropped_total", Help: "Messages dropped by tenant, space, queue name and reason: exhausted (no dead-letter queue), expired (messageRetentionSeconds passed).",
		}, append(q, "reason")),
		leaseHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "takoform_events_lease_held", Help: "1 while this host holds the events lease and dispatches cron and queues, else 0 (repo decision 0062).",
		}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "takoform_events_lease_takeovers_total", Help: "Acquisitions of the events lease by this host with a new epoch after an earlier holder's (lapsed, released or this host's previous run).",
		}),
		fenced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "takoform_events_fenced_writes_total", Help: "Writes of this host's dispatcher refused because its lease epoch was no longer current, by write: firing, claim, batch (a settlement).",
		}, []string{"write"}),
	}
}

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.firings, m.depth, m.oldest, m.deliveries, m.batches, m.retries, m.dead, m.dropped, m.leaseHeld, m.takeovers, m.fenced}
}

func (m *Metrics) firing(w runtime.Worker, outcome string) {
	m.firings.WithLabelValues(w.Tenant, w.Space, w.Name, outcome).Inc()
}

// queueName names a queue in labels.
type queueName struct{ tenant, space, name string }

func (q queueName) labels(extra ...string) []string {
	return append([]string{q.tenant, q.space, q.name}, extra...)
}
