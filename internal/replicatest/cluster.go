// Package replicatest runs several real `takoform host serve` processes on
// one database behind a round-robin reverse proxy, the shape a scaled-out
// host has in production (spec/host-api-v1alpha3.md §2.2; ARCHITECTURE.md
// §5). Tests in this package prove the lane's promises hold across
// replicas: conformance, fences, idempotent replay, operations, conflicting
// creates, crashes (SIGKILL) and linearizability; and the data plane's:
// workers served by every replica, SQLite databases under a SIGKILLed
// owner, the events dispatcher's lease under a SIGKILLed holder, rollouts
// under load (repo decisions 0061–0064). Its benchmarks measure the host
// and the data plane on replicas (PERFORMANCE.md, `make bench` and `make
// bench-runtime-replicas`).
//
// The database is real PostgreSQL: the tests take a fresh database from
// host/store/postgres/pgtest (TAKOFORM_TEST_POSTGRES, which `make test`
// sets through scripts/postgres.sh) and skip, saying so, without it.
package replicatest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
)

// Options shape a cluster. Zero values: two replicas, the built-in Edge
// family, no probe header, host defaults for every duration.
type Options struct {
	Replicas int
	// Data is the database every replica opens (`--data`): a
	// postgres:// URL, or a SQLite path when Replicas is 1.
	Data string
	// Forms, when set, is a forms directory installed instead of the
	// built-in family (`--forms`).
	Forms string
	// Probe enables the test-only conformance probe header.
	Probe bool
	// Args are extra `host serve` flags, e.g. "--provisioning-delay=2s".
	Args []string
	// Env is extra environment ("NAME=value") of replica i's process,
	// by index, at its first start (Replica.Env at a restart).
	Env map[int][]string
}

// Cluster is N host processes on one database and the proxy in front.
type Cluster struct {
	// URL is the round-robin proxy: consecutive requests go to
	// consecutive live replicas.
	URL      string
	Replicas []*Replica
	opts     Options
	dir      string
	proxy    *http.Server
	next     atomic.Uint64
	t        testing.TB
}

// Replica is one `takoform host serve` process. Its address survives a
// restart (the process is started again on the same port).
type Replica struct {
	Index  int
	URL    string // direct, bypassing the proxy
	target atomic.Pointer[url.URL]
	addr   string
	log    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	up     atomic.Bool
	// Served counts the requests the proxy sent to this replica.
	Served atomic.Int64
	// ingress is the worker ingress URL the process announced (with
	// `--ingress` in Options.Args), "" before.
	ingress atomic.Pointer[string]
	// loader is the runtime loader adapter's URL the process announced
	// (with `--runtime-loader-listen`), "" before.
	loader atomic.Pointer[string]
	// Env is extra environment ("NAME=value") of the next start of the
	// process (Options.Env[Index] at first); a test may change it between
	// a Kill and a Restart.
	Env []string
}

// Ingress is the worker ingress URL r's running process announced
// (`worker ingress on http://…`), waiting up to 30 s for it; "" when it
// announced none.
func (r *Replica) Ingress() string { return announced(&r.ingress) }

// Loader is the URL of the runtime loader adapter r's running process
// announced (`loader adapter … on http://…/`, with --conformance-probe
// and --runtime-loader-listen in Options.Args), waiting up to 30 s for
// it; "" when it announced none.
func (r *Replica) Loader() string { return announced(&r.loader) }

func announced(p *atomic.Pointer[string]) string {
	for range 300 {
		if u := p.Load(); u != nil {
			return *u
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// Start starts the cluster and stops every process when the test ends.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.Replicas <= 0 {
		o.Replicas = 2
	}
	if o.Data == "" {
		t.Fatal("replicatest: Options.Data names no database")
	}
	c := &Cluster{opts: o, dir: t.TempDir(), t: t}
	if err := writeTokens(filepath.Join(c.dir, "tokens.json")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	for i := 0; i < o.Replicas; i++ {
		r := &Replica{Index: i, addr: "127.0.0.1:0", log: filepath.Join(c.dir, fmt.Sprintf("replica-%d.log", i)), Env: o.Env[i]}
		c.Replicas = append(c.Replicas, r)
		if err := c.launch(r); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = &http.Server{Handler: &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(c.pick())
			pr.Out.Host = pr.In.Host // the host builds links from Host (handbook/postgresql.md, "Behind a load balancer")
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			// A replica that dies mid-request: the client sees no host
			// answer, an unknown outcome.
			http.Error(w, "replicatest proxy: "+err.Error(), http.StatusBadGateway)
		},
	}}
	go func() { _ = c.proxy.Serve(ln) }()
	c.URL = "http://" + ln.Addr().String()
	return c
}

// pick returns the next live replica in round-robin order (any replica
// when none is live: the request then fails as it would behind a real
// balancer with no healthy backend).
func (c *Cluster) pick() *url.URL {
	n := uint64(len(c.Replicas))
	start := c.next.Add(1)
	for i := uint64(0); i < n; i++ {
		if r := c.Replicas[(start+i)%n]; r.up.Load() {
			r.Served.Add(1)
			return r.target.Load()
		}
	}
	return c.Replicas[start%n].target.Load()
}

var (
	servingLine = regexp.MustCompile(`^takoform host serving (http://\S+) `)
	ingressLine = regexp.MustCompile(`^worker ingress on (http://\S+) `)
	loaderLine  = regexp.MustCompile(`^loader adapter \S+ on (http://\S+)/$`)
)

// launch starts r's process and waits until it serves.
func (c *Cluster) launch(r *Replica) error {
	bin, err := Binary()
	if err != nil {
		return err
	}
	r.ingress.Store(nil)
	r.loader.Store(nil)
	args := []string{"host", "serve", "--listen", r.addr, "--data", c.opts.Data, "--tokens", filepath.Join(c.dir, "tokens.json")}
	if c.opts.Forms != "" {
		args = append(args, "--forms", c.opts.Forms)
	}
	if c.opts.Probe {
		args = append(args, "--conformance-probe")
	}
	args = append(args, c.opts.Args...)
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start replica %d: %w", r.Index, err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := ingressLine.FindStringSubmatch(sc.Text()); m != nil {
				r.ingress.Store(&m[1])
			}
			if m := loaderLine.FindStringSubmatch(sc.Text()); m != nil {
				r.loader.Store(&m[1])
			}
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				lines <- m[1]
				sent = true
			}
		}
		if !sent {
			close(lines)
		}
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case u, ok := <-lines:
		if !ok {
			<-done
			return fmt.Errorf("replica %d exited before serving:\n%s", r.Index, tail(r.log))
		}
		target, err := url.Parse(u)
		if err != nil {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("replica %d announced %q: %w", r.Index, u, err)
		}
		r.mu.Lock()
		r.cmd, r.done, r.URL, r.addr = cmd, done, u, target.Host
		r.mu.Unlock()
		r.target.Store(target)
		r.up.Store(true)
		return nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("replica %d did not serve within 60s:\n%s", r.Index, tail(r.log))
	}
}

// PID is the process id of r's running process, 0 when none was started.
func (r *Replica) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Kill SIGKILLs replica i (no shutdown: the crash a test wants) and waits
// for the process to be gone; the proxy stops routing to it.
func (c *Cluster) Kill(i int) {
	if done := c.Replicas[i].signal(syscall.SIGKILL); done != nil {
		<-done
	}
}

// signal takes r out of the proxy's rotation and sends sig to its
// process; it returns the channel closed when the process is gone, nil
// when none runs.
func (r *Replica) signal(sig syscall.Signal) chan struct{} {
	r.up.Store(false)
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(sig)
	return done
}

// Terminate stops replica i in order (SIGTERM, as an operator stops a
// host: it releases what it holds) and waits for the process to be gone;
// the proxy stops routing to it.
func (c *Cluster) Terminate(i int) { c.Replicas[i].terminate() }

func (r *Replica) terminate() {
	done := r.signal(syscall.SIGTERM)
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.signal(syscall.SIGKILL)
		<-done
	}
}

// Restart starts replica i again on its old address.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if err := c.launch(c.Replicas[i]); err != nil {
		c.t.Fatal(err)
	}
}

// Logs returns the last lines of every replica's log (for failure messages).
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, r := range c.Replicas {
		fmt.Fprintf(&b, "--- replica %d (%s)\n%s\n", r.Index, r.URL, tail(r.log))
	}
	return b.String()
}

// Data is the database every replica opens (Options.Data).
func (c *Cluster) Data() string { return c.opts.Data }

// LogText is the whole log of r's processes (stderr and stdout).
func (r *Replica) LogText() string {
	b, err := os.ReadFile(r.log)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Stop stops the proxy and every replica (SIGTERM); the test's end calls
// it too.
func (c *Cluster) Stop() {
	if c.proxy != nil {
		_ = c.proxy.Close()
	}
	for _, r := range c.Replicas {
		r.terminate()
	}
	if c.t.Failed() {
		c.t.Logf("replica logs:\n%s", c.Logs())
	}
}

func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func writeTokens(path string) error {
	doc := fmt.Sprintf(`{"tokens":[{"sha256":%q,"tenant":"tenant-a","principal":"principal-1"},`+
		`{"sha256":%q,"tenant":"tenant-a","principal":"principal-2"},{"sha256":%q,"tenant":"tenant-b","principal":"principal-1"}]}`,
		host.HashToken(hosttest.TokenA1), host.HashToken(hosttest.TokenA2), host.HashToken(hosttest.TokenB))
	return os.WriteFile(path, []byte(doc), 0o600)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// BinaryEnvVar names a takoform binary the replicas run instead of one
// built from this checkout: a before/after comparison of two builds under
// one benchmark harness.
const BinaryEnvVar = "REPLICATEST_TAKOFORM_BINARY"

// Binary builds bin/takoform of this checkout once per test binary (into a
// temporary directory removed by Cleanup) and returns its path, or
// returns the binary BinaryEnvVar names.
func Binary() (string, error) {
	if bin := os.Getenv(BinaryEnvVar); bin != "" {
		return bin, nil
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "replicatest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "takoform")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/takoform/takoform/cmd/takoform")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/takoform: %v\n%s", err, out)
		}
	})
	return binPath, buildErr
}

// Cleanup removes the built binary; TestMain calls it after the run.
func Cleanup() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}
