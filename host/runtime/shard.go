package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/store"
)

// Supervision timings (spec/runtime-v1.md §9.4, §10.3).
const (
	// watchdogSilence: a shard whose event loop does not answer the health
	// probe for this long is killed and restarted.
	watchdogSilence = 5 * time.Second
	// readyTimeout bounds a new generation's start.
	readyTimeout = 20 * time.Second
	// drainGrace: an old generation gets SIGTERM, then this long to finish
	// what it serves (30 s plus the waitUntil ceiling of spec/runtime-v1.md §2.4) before SIGKILL.
	drainGrace = 60 * time.Second
	// switchDelay: the old generation stops this long after routing moved,
	// so requests routed just before the switch still reach it.
	switchDelay = time.Second
	// backoffMin and backoffMax bound the wait between failed starts.
	backoffMin = 500 * time.Millisecond
	backoffMax = 30 * time.Second
	tick       = time.Second
)

// shard supervises one tenant's engine process generations
// (spec/runtime-v1.md §0.3): never two tenants in one process.
type shard struct {
	rt       *Runtime
	tenant   string
	dir      string // 0700; generations in g<N>/, the gateway socket
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	gw       *http.Server // nil without a gateway
	gwSock   string
	tail     *http.Server // the tail sink (Runtime.tailSink)
	tailSock string
	user     *engine.User // nil: the host's own user

	draining sync.WaitGroup // old generations being stopped

	mu     sync.Mutex
	want   map[string]*versionSpec // runnable versions by UID
	events bool                    // the tenant has cron triggers or queue consumers: run the dispatch worker
	wfp    string                  // fingerprint of want and events
	cur    *generation             // serving; nil when none
	n      int                     // generations started
}

// generation is one running workerd of a shard.
type generation struct {
	n       int
	dir     string
	fp      string
	proc    *engine.Process
	health  string
	targets map[string]*Target
	// dispatch dials the host-owned dispatch worker (engine.Shard.Dispatch);
	// nil when the generation runs none.
	dispatch *http.Transport
}

func newShard(rt *Runtime, tenant string, dir string, user *engine.User) (*shard, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := user.Own(dir); err != nil {
		return nil, fmt.Errorf("giving the shard directory to its user: %w", err)
	}
	s := &shard{rt: rt, tenant: tenant, dir: dir, user: user, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if rt.cfg.Gateway != nil {
		s.gwSock = filepath.Join(dir, "gw.sock")
		if err := os.Remove(s.gwSock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("binding gateway socket: %w", err)
		}
		ln, err := net.Listen("unix", s.gwSock)
		if err != nil {
			return nil, fmt.Errorf("binding gateway socket: %w", err)
		}
		if err := user.Own(s.gwSock); err != nil {
			return nil, fmt.Errorf("binding gateway socket: %w", errors.Join(err, ln.Close()))
		}
		s.gw = &http.Server{Handler: rt.cfg.Gateway.ForTenant(tenant), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.gw.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				rt.log.Error("runtime: binding gateway stopped", "tenant", tenant, "err", err)
			}
		}()
	}
	s.tailSock = filepath.Join(dir, "tail.sock")
	if err := os.Remove(s.tailSock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tail sink socket: %w", err)
	}
	ln, err := net.Listen("unix", s.tailSock)
	if err != nil {
		if s.gw != nil {
			err = errors.Join(err, s.gw.Close())
		}
		return nil, fmt.Errorf("tail sink socket: %w", err)
	}
	if err := user.Own(s.tailSock); err != nil {
		err = errors.Join(err, ln.Close())
		if s.gw != nil {
			err = errors.Join(err, s.gw.Close())
		}
		return nil, fmt.Errorf("tail sink socket: %w", err)
	}
	s.tail = &http.Server{Handler: rt.tailSink(tenant), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.tail.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rt.log.Error("runtime: tail sink stopped", "tenant", tenant, "err", err)
		}
	}()
	go s.run()
	return s, nil
}

// setWant gives the shard the versions it should serve, and whether it
// runs the dispatch worker of cron triggers and queue consumers.
func (s *shard) setWant(vs map[string]*versionSpec, events bool) {
	var fps []string
	want := map[string]*versionSpec{}
	for uid, v := range vs {
		if v.unrunnable == "" {
			want[uid] = v
			fps = append(fps, v.fingerprint())
		}
	}
	slices.Sort(fps)
	sum := sha256.Sum256([]byte(fmt.Sprint(fps, events)))
	s.mu.Lock()
	s.want, s.events, s.wfp = want, events, hex.EncodeToString(sum[:])
	s.mu.Unlock()
	s.poke()
}

func (s *shard) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// target is the serving generation's socket for version uid, and whether
// the shard still has to start a generation that serves it.
func (s *shard) target(uid string) (*Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.targets[uid] != nil {
		return s.cur.targets[uid], false
	}
	_, wanted := s.want[uid]
	return nil, wanted
}

// run is the shard's supervisor: it starts the generation the desired
// state asks for, restarts one that died or missed its watchdog (with
// backoff), and stops everything on close.
func (s *shard) run() {
	defer close(s.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	backoff, next := backoffMin, time.Time{}
	for {
		select {
		case <-s.stop:
			s.mu.Lock()
			cur := s.cur
			s.cur = nil
			s.mu.Unlock()
			if cur != nil {
				cur.proc.Stop(5 * time.Second)
				removeDir(s.rt.log, cur.dir)
			}
			if s.gw != nil {
				if err := s.gw.Close(); err != nil {
					s.rt.log.Warn("runtime: binding gateway close", "tenant", s.tenant, "err", err)
				}
			}
			if err := s.tail.Close(); err != nil {
				s.rt.log.Warn("runtime: tail sink close", "tenant", s.tenant, "err", err)
			}
			return
		case <-s.kick:
		case <-t.C:
		}
		s.check()
		s.mu.Lock()
		cur, want, events, wfp := s.cur, s.want, s.events, s.wfp
		s.mu.Unlock()
		if len(want) == 0 {
			if cur != nil {
				s.replace(nil)
			}
			continue
		}
		if (cur != nil && cur.fp == wfp) || time.Now().Before(next) {
			continue
		}
		g, err := s.start(want, events, wfp)
		if err != nil {
			s.rt.log.Error("runtime: shard generation did not start; the previous one keeps serving", "tenant", s.tenant, "err", err, "retry_in", backoff)
			next = time.Now().Add(backoff)
			backoff = min(2*backoff, backoffMax)
			continue
		}
		backoff, next = backoffMin, time.Time{}
		s.replace(g)
	}
}

// check restarts nothing itself: a dead or silent generation is dropped
// (routes answer 503 until the next one serves), and the loop starts a
// new one from desired state.
func (s *shard) check() {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return
	}
	select {
	case <-cur.proc.Done():
		s.rt.log.Error("runtime: shard process exited; restarting it from desired state", "tenant", s.tenant, "generation", cur.n, "err", cur.proc.Err())
		s.drop(cur)
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), watchdogSilence)
	err := engine.Probe(ctx, cur.health)
	cancel()
	if err != nil {
		s.rt.log.Error("runtime: shard missed its watchdog; killing and restarting it", "tenant", s.tenant, "generation", cur.n, "silence", watchdogSilence, "err", err)
		cur.proc.Kill()
		s.drop(cur)
	}
}

// drop forgets a dead generation and republishes routing.
func (s *shard) drop(g *generation) {
	s.mu.Lock()
	if s.cur == g {
		s.cur = nil
	}
	s.mu.Unlock()
	s.rt.publish()
	removeDir(s.rt.log, g.dir)
}

// replace makes g (nil: none) the serving generation, republishes
// routing, then drains the old one (spec/runtime-v1.md §9.4).
func (s *shard) replace(g *generation) {
	s.mu.Lock()
	old := s.cur
	s.cur = g
	s.mu.Unlock()
	s.rt.publish()
	if g != nil {
		go func() { // a death is noticed at once, not at the next tick
			<-g.proc.Done()
			s.poke()
		}()
		s.rt.log.Info("runtime: shard generation serving", "tenant", s.tenant, "generation", g.n, "versions", len(g.targets), "pid", g.proc.Pid())
	}
	if old != nil {
		s.draining.Add(1)
		go func() {
			defer s.draining.Done()
			grace := drainGrace
			select {
			case <-time.After(switchDelay):
			case <-s.stop: // the shard closes: no long drain
				grace = 5 * time.Second
			}
			old.proc.Stop(grace)
			for _, t := range old.targets {
				t.Transport.CloseIdleConnections()
			}
			if old.dispatch != nil {
				old.dispatch.CloseIdleConnections()
			}
			removeDir(s.rt.log, old.dir)
		}()
	}
}

// start writes the next generation's config, starts workerd on new
// sockets and waits for its health probe.
func (s *shard) start(want map[string]*versionSpec, events bool, fp string) (*generation, error) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	dir := filepath.Join(s.dir, "g"+strconv.Itoa(n))
	removeDir(s.rt.log, dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	g := &generation{n: n, dir: dir, fp: fp, health: filepath.Join(dir, "health.sock"), targets: map[string]*Target{}}
	sh := engine.Shard{Dir: dir, Health: g.health, Gateway: s.gwSock, Tail: s.tailSock, Projections: s.rt.cfg.Projections}
	if events {
		sh.Dispatch = filepath.Join(dir, "dispatch.sock")
		g.dispatch = engine.UnixTransport(sh.Dispatch)
	}
	uids := make([]string, 0, len(want))
	for uid := range want {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	err := s.rt.cfg.Store.View(context.Background(), func(tx store.Tx) error {
		for i, uid := range uids {
			v := want[uid]
			mods, main, err := readModules(tx, v.manifest)
			if err != nil {
				return fmt.Errorf("version %s: %w", v.name, err)
			}
			secretVals, err := s.openSecrets(tx, v)
			if err != nil {
				return fmt.Errorf("version %s: %w", v.name, err)
			}
			var assets *engine.Assets
			if v.assets != nil {
				if assets, err = writeAssets(tx, dir, v.assets); err != nil {
					return fmt.Errorf("version %s: %w", v.name, err)
				}
			}
			sock := filepath.Join(dir, "v"+strconv.Itoa(i)+".sock")
			sh.Versions = append(sh.Versions, engine.Version{UID: uid, MainModule: main, Modules: mods, Vars: v.vars, Bindings: v.bindings, Services: v.services, Secrets: secretVals, Socket: sock, Assets: assets})
			g.targets[uid] = &Target{Version: uid, Worker: v.name, Who: v.worker, Socket: sock, Transport: engine.UnixTransport(sock)}
		}
		return nil
	})
	if err != nil {
		removeDir(s.rt.log, dir)
		return nil, err
	}
	cfg, err := engine.WriteConfig(sh)
	if err != nil {
		removeDir(s.rt.log, dir)
		return nil, err
	}
	if err := s.user.Own(dir); err != nil {
		removeDir(s.rt.log, dir)
		return nil, fmt.Errorf("giving the generation to the shard's user: %w", err)
	}
	env, err := engine.Environ(sh)
	if err != nil {
		removeDir(s.rt.log, dir)
		return nil, err
	}
	proc, err := engine.Start(s.rt.cfg.Binary, cfg, events, s.user, env, s.rt.log, "tenant", s.tenant, "generation", n)
	if err != nil {
		removeDir(s.rt.log, dir)
		return nil, err
	}
	g.proc = proc
	if s.rt.cfg.Limits != (engine.Limits{}) {
		if err := proc.Confine(filepath.Base(s.dir)+"-g"+strconv.Itoa(n), s.rt.cfg.Limits); err != nil {
			proc.Kill()
			removeDir(s.rt.log, dir)
			return nil, fmt.Errorf("confining the shard to its limits: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := proc.WaitReady(ctx, g.health); err != nil {
		proc.Kill()
		removeDir(s.rt.log, dir)
		return nil, err
	}
	return g, nil
}

// openSecrets opens the sensitive values v declares, as desired state
// saw them (spec/runtime-v1.md §3.2): a value unset or replaced since is
// an error (the next reconcile has the new desired state).
func (s *shard) openSecrets(tx store.Tx, v *versionSpec) ([]engine.Secret, error) {
	if len(v.secrets) == 0 {
		return nil, nil
	}
	rows, err := tx.SecretsOf(v.worker.UID)
	if err != nil {
		return nil, err
	}
	byName := map[string]*store.Secret{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	var out []engine.Secret
	for _, ref := range v.secrets {
		r := byName[ref.name]
		if r == nil || s.rt.cfg.Secrets == nil {
			return nil, fmt.Errorf("sensitive variable %s was unset while the generation started", ref.name)
		}
		val, err := s.rt.cfg.Secrets.Open(r)
		if err != nil {
			return nil, fmt.Errorf("sensitive variable %s: %w", ref.name, err)
		}
		out = append(out, engine.Secret{Name: ref.name, Value: string(val)})
	}
	return out, nil
}

// readModules reads a committed bundle manifest and its module bytes.
func readModules(tx store.Tx, digest string) ([]engine.Module, string, error) {
	doc, err := tx.Manifest(digest)
	if err != nil {
		return nil, "", fmt.Errorf("manifest %s: %w", digest, err)
	}
	m, err := artifact.ParseManifest(doc)
	if err != nil {
		return nil, "", fmt.Errorf("manifest %s: %w", digest, err)
	}
	var mods []engine.Module
	for _, mod := range m.Modules {
		b, err := tx.Blob(mod.Digest)
		if err != nil {
			return nil, "", fmt.Errorf("module %s: %w", mod.Name, err)
		}
		mods = append(mods, engine.Module{Name: mod.Name, MediaType: mod.MediaType, Data: b})
	}
	if m.MainModule == "" {
		return nil, "", errors.New("the manifest names no main module")
	}
	return mods, m.MainModule, nil
}

// close stops the shard's processes and gateway and waits.
func (s *shard) close() {
	close(s.stop)
	<-s.done
	s.draining.Wait()
}
