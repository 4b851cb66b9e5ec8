package runtime

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"syscall"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
)

// CronTrigger is one live WorkerCronTrigger of desired state
// (spec/runtime-v1.md §2.5): its UID, tenant, stored cron and the worker
// whose active deployment's weighted versions it fires.
type CronTrigger struct {
	UID, Tenant, Name string // Name: the trigger's "space/name", for logs
	Cron              string
	Worker            Worker
	Versions          Weights
}

// Consumer is one live QueueConsumer of desired state (spec/runtime-v1.md
// §2.6, spec/host-api-v1alpha3.md §6.3): the queue it drains, its
// dead-letter queue ("" when none) and its settings.
type Consumer struct {
	UID, Tenant, Name      string
	Queue, DeadLetterQueue string // AtLeastOnceQueue UIDs
	Worker                 Worker
	Versions               Weights
	MaxBatchSize           int
	MaxBatchTimeout        time.Duration
	MaxConcurrency         int
	MaxRetries             int
	RetryDelay             time.Duration
}

// Weights are a deployment's weighted version UIDs in stored order
// (spec/runtime-v1.md §9.1 (3)); an entry whose version is gone has UID "".
type Weights []weighted

// Draw picks a version by weight: r uniform in [0, 10000), the first
// entry whose running sum exceeds r (spec/runtime-v1.md §9.1 (3), (6));
// "" when the worker has no deployment or the drawn version is gone.
func (w Weights) Draw() string {
	r := rand.Int64N(10000)
	var sum int64
	for _, e := range w {
		sum += e.weight
		if r < sum {
			return e.uid
		}
	}
	return ""
}

// Events are the live cron triggers and queue consumers, as the last
// reconcile read them, each with its worker's weighted versions.
func (rt *Runtime) Events() ([]CronTrigger, []Consumer) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.desired == nil {
		return nil, nil
	}
	return rt.desired.crons, rt.desired.consumers
}

// readEvents reads every WorkerCronTrigger and QueueConsumer of both Edge
// groups into d, adding their workers' weighted versions to the versions
// the tenants' shards run (a worker with no endpoint still runs for
// them).
func readEvents(tx store.Tx, d *desired, o readOpts) error {
	for _, group := range edge.Groups() {
		err := eachAttached(tx, d, o, group, kindCronTrigger, func(c, w *store.Resource, vs Weights, spec map[string]any) error {
			d.crons = append(d.crons, CronTrigger{UID: c.UID, Tenant: c.Tenant, Name: c.Space + "/" + c.Name,
				Cron: ijson.As[string](spec["cron"]), Worker: workerOf(w), Versions: vs})
			return nil
		})
		if err != nil {
			return err
		}
		err = eachAttached(tx, d, o, group, kindConsumer, func(c, w *store.Resource, vs Weights, spec map[string]any) error {
			pins, err := tx.Pins(c.UID)
			if err != nil {
				return err
			}
			var numErr error
			num := func(name string) int {
				n, err := ijson.As[json.Number](spec[name]).Int64()
				if err != nil && numErr == nil {
					numErr = fmt.Errorf("queue consumer %s/%s: %s: %w", c.Space, c.Name, name, err)
				}
				return int(n)
			}
			d.consumers = append(d.consumers, Consumer{UID: c.UID, Tenant: c.Tenant, Name: c.Space + "/" + c.Name,
				Queue: pointerTarget(pins, "/queue"), DeadLetterQueue: pointerTarget(pins, "/deadLetterQueue"),
				Worker: workerOf(w), Versions: vs,
				MaxBatchSize: num("maxBatchSize"), MaxBatchTimeout: time.Duration(num("maxBatchTimeoutSeconds")) * time.Second,
				MaxConcurrency: num("maxConcurrency"), MaxRetries: num("maxRetries"),
				RetryDelay: time.Duration(num("retryDelaySeconds")) * time.Second})
			return numErr
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// eachAttached calls fn with each resource of kind in group whose worker
// is attached (attachedWorker), that worker, its weighted versions and
// the resource's decoded spec, and marks the resource's tenant as one
// whose events run. The first error, of fn or of a read, ends the walk.
func eachAttached(tx store.Tx, d *desired, o readOpts, group, kind string, fn func(att, w *store.Resource, vs Weights, spec map[string]any) error) error {
	atts, err := tx.ResourcesOfKind(group, kind)
	if err != nil {
		return err
	}
	for _, c := range atts {
		w, vs, err := attachedWorker(tx, d, c, o)
		if err != nil {
			return err
		}
		if w == nil {
			continue // no worker of its group is attached: nothing to run
		}
		spec, err := ijson.DecodeObject(c.Spec)
		if err != nil {
			return err
		}
		if err := fn(c, w, vs, spec); err != nil {
			return err
		}
		d.eventTenants[c.Tenant] = true
	}
	return nil
}

// attachedWorker is the worker an attachment's /worker pins (of its own
// group) and its deployment's weights, the versions added to d; nil when
// the worker is gone.
func attachedWorker(tx store.Tx, d *desired, att *store.Resource, o readOpts) (*store.Resource, Weights, error) {
	uid, err := pinTarget(tx, att.UID, "/worker")
	if err != nil || uid == "" {
		return nil, nil, err
	}
	w, err := present(tx.ResourceByUID(uid))
	if err != nil || w == nil || w.APIVersion != att.APIVersion || w.Kind != kindWorker {
		return nil, nil, err
	}
	vs, err := deployed(tx, d, w, o)
	return w, vs, err
}

// ErrNotReached wraps a dispatch that reached no handler: no serving
// generation runs the version, or the engine could not be reached. The
// handler did not run (spec/runtime-v1.md §2.5 rule 4, §2.6).
var ErrNotReached = errors.New("the dispatch reached no handler")

// dispatchTimeout bounds one scheduled or queue invocation: the 15 min
// handler limit of spec/runtime-v1.md §10.3, plus a margin.
const dispatchTimeout = 15*time.Minute + 30*time.Second

// dispatch posts req to path of the dispatch worker of the generation of
// tenant's shard serving version, and decodes its answer into out.
func (rt *Runtime) dispatch(ctx context.Context, tenant, version, path string, req, out any) (rerr error) {
	rt.mu.Lock()
	s := rt.shards[tenant]
	rt.mu.Unlock()
	if s == nil {
		return fmt.Errorf("%w: tenant %s has no shard", ErrNotReached, tenant)
	}
	s.mu.Lock()
	g := s.cur
	s.mu.Unlock()
	if g == nil || g.dispatch == nil || g.targets[version] == nil {
		return fmt.Errorf("%w: no serving shard generation runs version %s with events", ErrNotReached, version)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, dispatchTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://dispatch"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("content-type", "application/json")
	resp, err := g.dispatch.RoundTrip(hr)
	if err != nil {
		// Sent or not, the engine died or never answered: a connection
		// refused reached nothing; any other failure may have.
		if isRefused(err) {
			return fmt.Errorf("%w: %w", ErrNotReached, err)
		}
		return err
	}
	defer func() { rerr = errors.Join(rerr, resp.Body.Close()) }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: the dispatch worker answered %d: %s", ErrNotReached, resp.StatusCode, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}

// Scheduled invokes version's scheduled handler with the matched minute
// and the trigger's cron (spec/runtime-v1.md §2.5) and returns workerd's
// outcome ("ok" when the handler returned normally, "exception" when it
// threw or rejected, another of workerd's outcomes else). An error
// wrapping ErrNotReached means the handler did not run.
func (rt *Runtime) Scheduled(ctx context.Context, tenant, version string, minute time.Time, cron string) (string, error) {
	var out struct {
		Outcome string `json:"outcome"`
	}
	err := rt.dispatch(ctx, tenant, version, "/scheduled", map[string]any{"version": version, "scheduledTime": minute.UnixMilli(), "cron": cron}, &out)
	return out.Outcome, err
}

// QueueResult is a queue handler's outcome and settlements, as workerd's
// service binding returns them (spec/runtime-v1.md §2.6).
type QueueResult struct {
	Outcome    string `json:"outcome"`
	AckAll     bool   `json:"ackAll"`
	RetryBatch struct {
		Retry        bool `json:"retry"`
		DelaySeconds *int `json:"delaySeconds"`
	} `json:"retryBatch"`
	ExplicitAcks  []string `json:"explicitAcks"`
	RetryMessages []struct {
		ID           string `json:"msgId"`
		DelaySeconds *int   `json:"delaySeconds"`
	} `json:"retryMessages"`
}

// Queue delivers msgs of the queue named queueName as one batch to
// version's queue handler and returns its result. An error wrapping
// ErrNotReached means the handler did not run.
func (rt *Runtime) Queue(ctx context.Context, tenant, version, queueName string, msgs []*store.QueueMessage) (*QueueResult, error) {
	type wireMsg struct {
		ID        string `json:"id"`
		Timestamp int64  `json:"timestamp"`
		Body      string `json:"body"`
		Attempts  int    `json:"attempts"`
	}
	ms := make([]wireMsg, len(msgs))
	for i, m := range msgs {
		ms[i] = wireMsg{ID: m.ID, Timestamp: m.AcceptedAt.UnixMilli(), Body: base64.StdEncoding.EncodeToString(m.Body), Attempts: m.Attempts}
	}
	out := &QueueResult{}
	err := rt.dispatch(ctx, tenant, version, "/queue", map[string]any{"version": version, "queue": queueName, "messages": ms}, out)
	return out, err
}

// isRefused reports a dial that reached no listener: the socket is gone
// or nothing accepts on it, so nothing was sent.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}
