package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is one running workerd (a shard generation).
type Process struct {
	log  *slog.Logger
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit, once done is closed

	mu     sync.Mutex
	exited bool
	cgroup *Cgroup // removed once the process has exited
}

// Start runs `workerd serve CONFIG config` (no --watch; --experimental
// only when experimental is set, which a config needs for the host-owned
// dispatch worker's compatibility flag, Shard.Dispatch) as user (nil: the host's own user) with exactly the
// environment env (Environ: none of the host's own variables). The
// process gets SIGKILL when the host's thread that started it dies
// (Pdeathsig) and runs in its own process group; its stdout and
// stderr (worker console output, uncaught errors) go to log line by line
// as "engine output" records with the given attributes.
func Start(bin, config string, experimental bool, user *User, env []string, log *slog.Logger, attrs ...any) (*Process, error) {
	args := []string{"serve", config, "config"}
	if experimental {
		args = []string{"serve", "--experimental", config, "config"}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{}, env...) // non-nil: nothing inherited
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: user.credential()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start workerd: %w", err)
	}
	p := &Process{log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logLine(log, sc.Bytes(), attrs)
		}
		if _, err := io.Copy(io.Discard, out); err != nil {
			log.Debug("engine output closed", append(attrs, "err", err)...)
		}
		p.err = cmd.Wait()
		p.mu.Lock()
		p.exited = true
		g := p.cgroup
		p.mu.Unlock()
		if g != nil {
			if err := g.Remove(); err != nil {
				log.Warn("engine cgroup not removed", append(attrs, "err", err)...)
			}
		}
		close(p.done)
	}()
	return p, nil
}

// logLine logs one line of workerd's output. With structuredLogging
// (WriteConfig) workerd writes one JSON object per line: its own
// diagnostics name their "source" and are logged at Info (Warn when their
// level is "error"); console output of worker code has no "source" and is
// logged at Debug only, since it reaches operators through the tail sink
// with the worker named (TailWorker). Any other line is logged at Info.
func logLine(log *slog.Logger, line []byte, attrs []any) {
	var rec struct {
		Level   string `json:"level"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Message == "" && rec.Level == "" {
		log.Info("engine output", append(attrs, "line", string(line))...)
		return
	}
	switch {
	case rec.Source == "":
		log.Debug("engine output: worker console", append(attrs, "level", rec.Level, "line", rec.Message)...)
	case rec.Level == "error":
		log.Warn("engine output", append(attrs, "source", rec.Source, "line", rec.Message)...)
	default:
		log.Info("engine output", append(attrs, "source", rec.Source, "line", rec.Message)...)
	}
}

// Confine puts the process into cgroup v1 groups named name with limits
// l (Confine of cgroup.go); they are removed when it exits.
func (p *Process) Confine(name string, l Limits) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return errors.New("the process has exited")
	}
	g, err := Confine(p.Pid(), name, l)
	if err != nil {
		return errors.Join(err, g.Remove())
	}
	p.cgroup = g
	return nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited; Err then says how.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exit (nil before Done is closed or for exit 0).
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop sends SIGTERM (workerd stops accepting and finishes what it
// serves), waits up to grace, then kills the process group.
func (p *Process) Stop(grace time.Duration) {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.log.Debug("engine SIGTERM", "pid", p.Pid(), "err", err) // it has exited
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill kills the process group at once and waits for the exit.
func (p *Process) Kill() {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		p.log.Debug("engine SIGKILL", "pid", p.Pid(), "err", err) // it has exited
	}
	<-p.done
}

// Probe asks the shard's health worker (Shard.Health, a host-owned worker
// with no tenant code) for "ok" within ctx: workerd's one event loop
// answered, so the process is alive and, once it first answers, every
// socket of its config is listening.
func Probe(ctx context.Context, socket string) (rerr error) {
	tr := UnixTransport(socket)
	tr.DisableKeepAlives = true
	defer tr.CloseIdleConnections()
	c := http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://health/", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { rerr = errors.Join(rerr, resp.Body.Close()) }()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 64)); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health probe answered %d", resp.StatusCode)
	}
	return nil
}

// WaitReady probes socket every 20 ms until it answers, ctx ends or the
// process exits.
func (p *Process) WaitReady(ctx context.Context, socket string) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := Probe(pctx, socket)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("workerd did not answer its health probe: %w", errors.Join(ctx.Err(), err))
		case <-p.done:
			return fmt.Errorf("workerd exited before it answered: %v", p.err)
		case <-t.C:
		}
	}
}

// UnixTransport is an HTTP/1.1 transport whose every connection dials the
// unix socket path, whatever the request's host.
func UnixTransport(path string) *http.Transport {
	var d net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}
