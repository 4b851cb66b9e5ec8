// Package runtime is the host's data plane (spec/runtime-v1.md): from the
// store's desired state it keeps one workerd shard per tenant running the
// versions that routable workers' deployments weight, and keeps the
// routing table the ingress (package ingress) resolves hostnames with.
// It reconciles at start, after each committed Edge mutation (Notify) and
// periodically (repo decision 0050).
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
)

// Gateway serves the bindings of one tenant's shard: the host serves
// ForTenant(tenant) on a host-only unix socket in the shard's 0700
// directory, and workerd sends every gateway binding's calls there with
// the bound resource's UID in the Takoform-Binding header
// (spec/runtime-v1.md §0.3, §5.0). The handler must check the UID belongs
// to tenant.
type Gateway interface {
	ForTenant(tenant string) http.Handler
}

// Config configures the data plane.
type Config struct {
	Store store.Store
	// Binary is the workerd binary (engine.Find); "" runs no workers: every
	// ingress answer is 503 and NoEngine says why.
	Binary string
	// NoEngine says why Binary is empty, for logs and answers.
	NoEngine string
	// Dir holds shard directories (created 0700); "" makes a temporary one
	// removed on Close.
	Dir string
	// Gateway serves bindings; nil makes every version with a gateway
	// binding not runnable (503, logged).
	Gateway Gateway
	// Projections maps projection module names (engine.Projections) to JS
	// sources; the gateway kinds need them.
	Projections map[string]string
	// Hostname is a WorkerEndpoint's host-assigned hostname
	// (status.outputs.hostname, edgehost.Family.EndpointHostname).
	Hostname func(*store.Resource) string
	Logger   *slog.Logger
	// Limits are each shard's CPU and memory ceilings, applied through
	// cgroup v1 where this host may create groups (engine.CgroupsV1);
	// elsewhere they are not enforced, which New logs and State says.
	Limits engine.Limits
	// Secrets opens workers' sensitive values (spec/runtime-v1.md §3.2);
	// nil makes every version requiring one not runnable (503, logged).
	Secrets *secrets.Keyring
	// Announce, when set, tells the other replicas on the same store that
	// desired state changed (store.Peers; they call Refresh): Notify calls
	// it for each mutation it reconciles after. It must not block.
	Announce func()
	// Period is the periodic reconcile interval (default 30 s).
	Period time.Duration
	// ShardUIDBase, when not 0, runs the Nth shard's workerd as uid and
	// gid ShardUIDBase+N, never root and never another tenant's
	// (spec/runtime-v1.md §10.4); it needs the host to run as root, and
	// falls back to the host's user (logged, in State) where the engine
	// binary or Dir cannot be reached by another user.
	ShardUIDBase uint32
	// Domains grants custom hostnames outside .localhost to tenants
	// (spec/runtime-v1.md §10.6); nil routes .localhost ones only.
	Domains *Domains
}

// DefaultShardUIDBase is the first uid of shard users when the host runs
// as root: far above the ranges distributions and systemd hand out, so a
// shard's uid owns nothing else on the machine.
const DefaultShardUIDBase = 1_500_000_000

// DefaultShardUIDs is the ShardUIDBase a host uses by default:
// DefaultShardUIDBase when it runs as root, else 0 (it could not switch).
func DefaultShardUIDs() uint32 {
	if os.Geteuid() == 0 {
		return DefaultShardUIDBase
	}
	return 0
}

// Runtime is the running data plane.
type Runtime struct {
	cfg     Config
	log     *slog.Logger
	tmp     bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	tbl     atomic.Pointer[table]
	limits  string     // how shard limits are enforced, for State
	users   string     // which user shards run as, for State
	mu      sync.Mutex // guards shards, desired, nShards, publishing
	shards  map[string]*shard
	desired *desired
	nShards int
	state   atomic.Pointer[string] // the data plane's state for /readyz
	tail    tailHub
}

// New starts the data plane: a first reconcile runs at once in the
// background, then one after each Notify and every Period.
func New(cfg Config) (*Runtime, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Period <= 0 {
		cfg.Period = 30 * time.Second
	}
	if cfg.Store == nil || cfg.Hostname == nil {
		return nil, fmt.Errorf("runtime: a store and a hostname function are required")
	}
	rt := &Runtime{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), shards: map[string]*shard{}}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "takoform-runtime-")
		if err != nil {
			return nil, err
		}
		rt.cfg.Dir, rt.tmp = d, true
	} else if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	rt.tbl.Store(&table{hosts: map[string]*tableRoute{}})
	rt.limits = rt.enforceLimits()
	rt.users = rt.shardUsers()
	if cfg.Binary == "" {
		rt.setState("workers do not run on this host: " + cfg.NoEngine)
	} else {
		rt.setState("starting")
	}
	go rt.loop()
	rt.Refresh()
	return rt, nil
}

// shardUsers says which user shards run as, and drops ShardUIDBase where
// another user could not reach the engine or the runtime directory (the
// directory is made searchable, not listable, by others: 0711).
func (rt *Runtime) shardUsers() string {
	if rt.cfg.ShardUIDBase == 0 || rt.cfg.Binary == "" {
		rt.cfg.ShardUIDBase = 0
		return "shards run as the host's user"
	}
	var err error
	if os.Geteuid() != 0 {
		err = errors.New("switching to another user needs the host to run as root")
	}
	if err == nil {
		err = os.Chmod(rt.cfg.Dir, 0o711)
	}
	if err == nil {
		err = engine.ReachableByOthers(rt.cfg.Binary, rt.cfg.Dir)
	}
	if err != nil {
		rt.cfg.ShardUIDBase = 0
		rt.log.Warn("runtime: shards run as the host's user, not each as its own", "err", err)
		return "shards run as the host's user: " + err.Error()
	}
	rt.log.Info("runtime: each shard runs as its own user", "uidBase", rt.cfg.ShardUIDBase)
	return fmt.Sprintf("each shard runs as its own user (uid %d + shard number)", rt.cfg.ShardUIDBase)
}

// enforceLimits says how shard limits are enforced: through cgroup v1, or
// not (then they are dropped, and the log says why).
func (rt *Runtime) enforceLimits() string {
	l := rt.cfg.Limits
	if l == (engine.Limits{}) {
		return "no per-shard CPU or memory limit configured"
	}
	if err := engine.CgroupsV1(); err != nil {
		rt.cfg.Limits = engine.Limits{}
		rt.log.Warn("runtime: per-shard CPU and memory limits not enforced", "err", err)
		return "per-shard CPU and memory limits not enforced: " + err.Error()
	}
	if n, err := engine.SweepCgroups(); err != nil || n > 0 {
		rt.log.Info("runtime: swept cgroups left by hosts that died", "removed", n, "err", err)
	}
	rt.log.Info("runtime: per-shard limits through cgroup v1", "millicores", l.CPUMillicores, "memoryBytes", l.MemoryBytes)
	return fmt.Sprintf("per-shard limits through cgroup v1: %d millicores, %d bytes of memory", l.CPUMillicores, l.MemoryBytes)
}

// Engine reports whether this data plane runs workers, and if not why.
func (rt *Runtime) Engine() (bool, string) { return rt.cfg.Binary != "", rt.cfg.NoEngine }

// State is the data plane's state in one line (for /readyz's detail).
func (rt *Runtime) State() string { return *rt.state.Load() }

func (rt *Runtime) setState(s string) { rt.state.Store(&s) }

// removeDir removes a directory the data plane made; a failure is logged.
func removeDir(log *slog.Logger, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("runtime: directory not removed", "dir", dir, "err", err)
	}
}

// PeerChannel is the store.Peers channel on which replicas announce
// changes of desired state.
const PeerChannel = "takoform_dataplane"

// Notify asks for a reconcile after a committed mutation of k, and
// announces it to the other replicas (Config.Announce): cheap and
// non-blocking; only the Edge kinds desired state is read from, of either
// Edge group, count (the zero Key always reconciles).
func (rt *Runtime) Notify(k store.Key) {
	if k != (store.Key{}) && (!edge.IsGroup(k.APIVersion) || !watchedKinds[k.Kind]) {
		return
	}
	if rt.cfg.Announce != nil {
		rt.cfg.Announce()
	}
	rt.Refresh()
}

// Refresh asks for a reconcile, announcing nothing: what a replica calls
// when another announced a change (Config.Announce).
func (rt *Runtime) Refresh() {
	select {
	case rt.kick <- struct{}{}:
	default:
	}
}

// Resolve routes one request's canonical hostname (spec/runtime-v1.md
// §9.1): the target, or the outcome and the reason (for logs only).
func (rt *Runtime) Resolve(host string) (*Target, Outcome, string) {
	if rt.cfg.Binary == "" {
		return nil, NoEngine, "workers do not run on this host: " + rt.cfg.NoEngine
	}
	return rt.tbl.Load().resolve(host)
}

// WorkerOf is the worker that answers a canonical hostname, whether or
// not it runs (for metrics and logs of the host's own answers).
func (rt *Runtime) WorkerOf(host string) (Worker, bool) { return rt.tbl.Load().workerOf(host) }

// Processes maps each tenant with a serving shard generation to its
// workerd process id (for operators and tests).
func (rt *Runtime) Processes() map[string]int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := map[string]int{}
	for tenant, s := range rt.shards {
		s.mu.Lock()
		if s.cur != nil {
			out[tenant] = s.cur.proc.Pid()
		}
		s.mu.Unlock()
	}
	return out
}

// Close stops reconciling and every shard (their processes die with them).
func (rt *Runtime) Close() {
	close(rt.stop)
	<-rt.done
	rt.mu.Lock()
	shards := rt.shards
	rt.shards = map[string]*shard{}
	rt.mu.Unlock()
	for _, s := range shards {
		s.close()
	}
	if rt.tmp {
		removeDir(rt.log, rt.cfg.Dir)
	}
}

// reconcileGap is the least time between two reconciles: a burst of
// mutations costs one read of desired state per gap, not one each.
const reconcileGap = 100 * time.Millisecond

func (rt *Runtime) loop() {
	defer close(rt.done)
	t := time.NewTicker(rt.cfg.Period)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-rt.stop:
			return
		case <-rt.kick:
		case <-t.C:
		}
		if wait := reconcileGap - time.Since(last); wait > 0 {
			select {
			case <-rt.stop:
				return
			case <-time.After(wait):
			}
		}
		last = time.Now()
		if err := rt.reconcile(); err != nil {
			rt.log.Error("runtime: reading desired state failed; the data plane keeps what it runs", "err", err)
		}
	}
}

// reconcile reads desired state and hands each tenant's shard its versions.
func (rt *Runtime) reconcile() error {
	var d *desired
	err := rt.cfg.Store.View(context.Background(), func(tx store.Tx) error {
		var err error
		d, err = readDesired(tx, rt.cfg.Hostname, readOpts{domains: rt.cfg.Domains, gateway: rt.cfg.Gateway != nil, keys: rt.cfg.Secrets})
		return err
	})
	if err != nil {
		return err
	}
	rt.mu.Lock()
	rt.desired = d
	var gone []*shard
	if rt.cfg.Binary != "" {
		for tenant, vs := range d.tenants {
			s := rt.shards[tenant]
			if s == nil {
				rt.nShards++
				var user *engine.User
				if b := rt.cfg.ShardUIDBase; b != 0 {
					user = &engine.User{UID: b + uint32(rt.nShards), GID: b + uint32(rt.nShards)}
				}
				s, err = newShard(rt, tenant, filepath.Join(rt.cfg.Dir, "s"+strconv.Itoa(rt.nShards)), user)
				if err != nil {
					rt.log.Error("runtime: shard not created", "tenant", tenant, "err", err)
					continue
				}
				rt.shards[tenant] = s
			}
			s.setWant(vs, d.eventTenants[tenant])
		}
		for tenant, s := range rt.shards {
			if d.tenants[tenant] == nil {
				delete(rt.shards, tenant)
				gone = append(gone, s)
			}
		}
		rt.setState(fmt.Sprintf("workerd running: %d shard(s), %d routed hostname(s); %s; %s", len(rt.shards), len(d.hosts), rt.limits, rt.users))
	}
	rt.mu.Unlock()
	rt.publish()
	for _, s := range gone {
		go s.close()
	}
	return nil
}

// publish rebuilds the routing table from desired state and the shards'
// serving generations and swaps it in. A route whose newly weighted
// version has no serving generation yet keeps its previous entries, so
// traffic moves only once the new generation answers (spec/runtime-v1.md §9.4).
func (rt *Runtime) publish() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	d := rt.desired
	if d == nil {
		return
	}
	prev := rt.tbl.Load()
	next := &table{hosts: make(map[string]*tableRoute, len(d.hosts))}
	for host, r := range d.hosts {
		tr := &tableRoute{worker: r.worker, who: r.who}
		for _, w := range r.versions {
			e := tableEntry{weight: w.weight}
			v := d.tenants[r.tenant][w.uid]
			switch {
			case v == nil:
				e.reason = "a weighted version is gone"
			case v.unrunnable != "":
				e.reason = "version " + v.name + " is not runnable: " + v.unrunnable
			default:
				if s := rt.shards[r.tenant]; s != nil {
					e.target, e.starting = s.target(w.uid)
				}
				if e.target == nil {
					e.reason = "version " + v.name + " is not running yet"
				}
			}
			tr.entries = append(tr.entries, e)
		}
		if old := prev.hosts[host]; old != nil && tr.waiting() && old.serving() {
			tr = old
		}
		next.hosts[host] = tr
	}
	rt.tbl.Store(next)
}
