package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
)

// TailRecord is one line of `takoform tail` (handbook/workers-observability.md):
// a console call of worker code (Kind "console", Level its method) or an
// uncaught exception or rejected task (Kind "exception", Level "error",
// Name the error's name), with the worker, the version and the event
// that ran (fetch, scheduled, queue).
type TailRecord struct {
	Time       time.Time `json:"time"`
	Worker     Worker    `json:"worker"`
	Version    string    `json:"version"`    // the WorkerVersion's "space/name"
	VersionUID string    `json:"versionUid"` // its UID
	Level      string    `json:"level"`      // log, info, warn, error, debug
	Kind       string    `json:"kind"`       // console, exception, dropped
	Name       string    `json:"name,omitempty"`
	Message    string    `json:"message"`
	Event      string    `json:"event,omitempty"`
}

// tailBuffer is how many records a slow tail reader may lag behind
// before records are dropped (and a "dropped" record says how many).
const tailBuffer = 1024

// maxTailPost bounds one post of the tail worker to the sink.
const maxTailPost = 8 << 20

// tailHub fans tail records out to the readers of each worker.
type tailHub struct {
	mu   sync.Mutex
	subs map[string]map[*tailSub]struct{} // by worker UID
}

type tailSub struct {
	ch      chan TailRecord
	dropped atomic.Int64
}

func (h *tailHub) publish(r TailRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[r.Worker.UID] {
		select {
		case s.ch <- r:
		default:
			s.dropped.Add(1)
		}
	}
}

func (h *tailHub) subscribe(uid string) (*tailSub, func()) {
	s := &tailSub{ch: make(chan TailRecord, tailBuffer)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[*tailSub]struct{}{}
	}
	if h.subs[uid] == nil {
		h.subs[uid] = map[*tailSub]struct{}{}
	}
	h.subs[uid][s] = struct{}{}
	h.mu.Unlock()
	return s, func() {
		h.mu.Lock()
		delete(h.subs[uid], s)
		if len(h.subs[uid]) == 0 {
			delete(h.subs, uid)
		}
		h.mu.Unlock()
	}
}

// ErrNoWorker is Tail's error for a worker the tenant does not hold.
var ErrNoWorker = errors.New("no such worker")

// Tail opens the tail of one of tenant's ModuleWorkers, named by space,
// name and Edge group ("" is edge.forms.takoform.com/v1alpha1; a group that is
// not an Edge group holds no worker): the returned
// stream hands each console record and uncaught exception of the worker
// to emit until ctx ends (nil) or emit fails (its error). Records before
// Tail returns are not seen. A worker the tenant does not hold is
// ErrNoWorker (another tenant's worker is indistinguishable from none).
func (rt *Runtime) Tail(ctx context.Context, tenant, space, name, group string) (func(emit func(TailRecord) error) error, error) {
	if group == "" {
		group = edge.Group
	}
	if !edge.IsGroup(group) {
		return nil, ErrNoWorker
	}
	var w *store.Resource
	err := rt.cfg.Store.View(ctx, func(tx store.Tx) error {
		var err error
		w, err = present(tx.Resource(store.Key{Tenant: tenant, Space: space, APIVersion: group, Kind: kindWorker, Name: name}))
		return err
	})
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, ErrNoWorker
	}
	s, cancel := rt.tail.subscribe(w.UID)
	context.AfterFunc(ctx, cancel) // also when the stream is never run
	return func(emit func(TailRecord) error) error {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return nil
			case r := <-s.ch:
				if n := s.dropped.Swap(0); n > 0 {
					drop := TailRecord{Time: time.Now().UTC(), Worker: r.Worker, Level: "warn", Kind: "dropped",
						Message: fmt.Sprintf("%d record(s) dropped: this reader fell more than %d records behind", n, tailBuffer)}
					if err := emit(drop); err != nil {
						return err
					}
				}
				if err := emit(r); err != nil {
					return err
				}
			}
		}
	}, nil
}

// traceEvent is the part of a workerd trace event the sink reads.
type traceEvent struct {
	Outcome string `json:"outcome"`
	Logs    []struct {
		Message   []json.RawMessage `json:"message"`
		Level     string            `json:"level"`
		Timestamp int64             `json:"timestamp"`
	} `json:"logs"`
	Exceptions []struct {
		Name      string `json:"name"`
		Message   string `json:"message"`
		Timestamp int64  `json:"timestamp"`
	} `json:"exceptions"`
	Event map[string]json.RawMessage `json:"event"`
}

// eventKind names the handler an event invoked.
func eventKind(e map[string]json.RawMessage) string {
	switch {
	case e["request"] != nil:
		return "fetch"
	case e["cron"] != nil:
		return "scheduled"
	case e["queue"] != nil || e["batchSize"] != nil:
		return "queue"
	}
	return ""
}

// consoleMessage joins a console call's arguments: strings as they are,
// other values as JSON, separated by spaces.
func consoleMessage(args []json.RawMessage) string {
	parts := make([]string, len(args))
	for i, a := range args {
		var s string
		if json.Unmarshal(a, &s) == nil {
			parts[i] = s
		} else {
			parts[i] = string(a)
		}
	}
	return strings.Join(parts, " ")
}

// tailSink serves one shard's tail sink: the host-owned tail worker posts
// {"version", "events"} (engine.TailWorker). Records go to the tail
// readers; exceptions also go to the host log with worker, version, kind,
// error name and message (spec/runtime-v1.md §2.1).
func (rt *Runtime) tailSink(tenant string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var post struct {
			Version string       `json:"version"`
			Events  []traceEvent `json:"events"`
		}
		err := json.NewDecoder(io.LimitReader(r.Body, maxTailPost)).Decode(&post)
		if err != nil {
			rt.log.Warn("runtime: tail sink: unreadable post", "tenant", tenant, "err", err)
			http.Error(w, "bad tail post", http.StatusBadRequest)
			return
		}
		v := rt.versionSpec(post.Version)
		if v == nil || v.tenant != tenant {
			rt.log.Debug("runtime: tail sink: a post for a version this shard does not run", "tenant", tenant, "version", post.Version)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		for _, e := range post.Events {
			kind := eventKind(e.Event)
			for _, l := range e.Logs {
				rt.tail.publish(TailRecord{Time: time.UnixMilli(l.Timestamp).UTC(), Worker: v.worker, Version: v.name, VersionUID: v.uid,
					Level: l.Level, Kind: "console", Message: consoleMessage(l.Message), Event: kind})
			}
			for _, x := range e.Exceptions {
				rt.log.Warn("worker uncaught error", "tenant", tenant, "worker", v.worker.Space+"/"+v.worker.Name, "group", v.worker.Group,
					"version", v.name, "kind", kind, "outcome", e.Outcome, "error_name", x.Name, "error_message", x.Message)
				rt.tail.publish(TailRecord{Time: time.UnixMilli(x.Timestamp).UTC(), Worker: v.worker, Version: v.name, VersionUID: v.uid,
					Level: "error", Kind: "exception", Name: x.Name, Message: x.Message, Event: kind})
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// versionSpec is the desired version uid, nil when none.
func (rt *Runtime) versionSpec(uid string) *versionSpec {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.desired == nil {
		return nil
	}
	for _, vs := range rt.desired.tenants {
		if v := vs[uid]; v != nil {
			return v
		}
	}
	return nil
}
