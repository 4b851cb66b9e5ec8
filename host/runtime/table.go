package runtime

import (
	"math/rand/v2"
	"net/http"
)

// Worker names one ModuleWorker unambiguously: its tenant, space, name,
// Form group (apiVersion) and UID (for metrics, logs and tail records).
type Worker struct {
	Tenant string `json:"-"`
	Space  string `json:"space"`
	Name   string `json:"name"`
	Group  string `json:"group"`
	UID    string `json:"uid"`
}

// Target is one version's socket in the shard generation serving it.
type Target struct {
	Version string // WorkerVersion UID
	Worker  string // the version's "space/name", for logs
	// Who is the worker the version belongs to.
	Who    Worker
	Socket string
	// Transport dials Socket; shared by every request to the target.
	Transport *http.Transport
}

// Outcome is what routing decided for a hostname (spec/runtime-v1.md §9.1).
type Outcome int

// Routing outcomes.
const (
	Routed      Outcome = iota // Target answers
	UnknownHost                // no worker answers the hostname: 404
	NotRunnable                // no deployment, or the drawn version cannot run: 503
	NoEngine                   // this host runs no workers (no workerd): 503
)

// table is an immutable routing table, swapped atomically
// (spec/runtime-v1.md §9.1 (5)).
type table struct {
	hosts map[string]*tableRoute
}

type tableRoute struct {
	who     Worker
	worker  string
	entries []tableEntry
}

// tableEntry is one weighted version: its target, or why it cannot run.
type tableEntry struct {
	weight int64
	target *Target
	reason string
	// starting: runnable, but its shard generation does not serve it yet.
	starting bool
}

// resolve draws a version for one request: r uniform in [0, 10000), the
// first entry whose running weight sum exceeds r (spec/runtime-v1.md
// §9.1 (3)). reason says why a request is not routed.
func (t *table) resolve(host string) (*Target, Outcome, string) {
	return t.resolveDraw(host, rand.Int64N(10000))
}

// resolveDraw is resolve with the draw given.
func (t *table) resolveDraw(host string, draw int64) (*Target, Outcome, string) {
	r := t.hosts[host]
	if r == nil {
		return nil, UnknownHost, "no worker answers this hostname"
	}
	if len(r.entries) == 0 {
		return nil, NotRunnable, "worker " + r.worker + " has no active deployment"
	}
	var sum int64
	for _, e := range r.entries {
		sum += e.weight
		if draw < sum {
			if e.target == nil {
				return nil, NotRunnable, "worker " + r.worker + ": " + e.reason
			}
			return e.target, Routed, ""
		}
	}
	return nil, NotRunnable, "worker " + r.worker + ": its deployment's weights do not sum to 10000"
}

// workerOf is the worker that answers host, and whether one does.
func (t *table) workerOf(host string) (Worker, bool) {
	r := t.hosts[host]
	if r == nil {
		return Worker{}, false
	}
	return r.who, true
}

// serving is true when every entry of r has a target.
func (r *tableRoute) serving() bool {
	for _, e := range r.entries {
		if e.target == nil {
			return false
		}
	}
	return true
}

// waiting is true when an entry's version is runnable but not served yet.
func (r *tableRoute) waiting() bool {
	for _, e := range r.entries {
		if e.starting {
			return true
		}
	}
	return false
}
