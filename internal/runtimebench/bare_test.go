package runtimebench_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
)

// bare is a bare workerd process, the floor of the shard's memory and
// start: n workers with hello-world sources written by hand into a minimal
// config (one worker service and one unix socket each, the shard's
// compatibility date; no generated entry, health worker, network service
// or gateway), started as the shard is started (engine.Start: no
// inherited environment), as the host's own user.
type bare struct {
	proc    *engine.Process
	sockets []string
	bodies  []string
}

// helloN is hello world with a label, so each worker's source differs.
func helloN(label string) (src, body string) {
	body = "hello world " + label + "\n"
	return "export default { fetch() { return new Response(" + strconv.Quote(body) + "); } };\n", body
}

// startBare writes the config of n workers into a fresh directory and
// starts workerd on it, returning at once.
func startBare(b *testing.B, bin string, n int) *bare {
	dir, err := os.MkdirTemp("", "bench-bare-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	var svc, sockets []string
	out := &bare{}
	for i := range n {
		src, body := helloN("bare-" + strconv.Itoa(i))
		file := "w" + strconv.Itoa(i) + ".js"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o600); err != nil {
			b.Fatal(err)
		}
		sock := filepath.Join(dir, "w"+strconv.Itoa(i)+".sock")
		svc = append(svc, fmt.Sprintf(`(name = "w%d", worker = (modules = [(name = "index.js", esModule = embed %q)], compatibilityDate = %q))`, i, file, engine.CompatibilityDate))
		sockets = append(sockets, fmt.Sprintf(`(name = "s%d", address = %q, http = (), service = "w%d")`, i, "unix:"+sock, i))
		out.sockets, out.bodies = append(out.sockets, sock), append(out.bodies, body)
	}
	config := "using Workerd = import \"/workerd/workerd.capnp\";\nconst config :Workerd.Config = (\n  services = [\n    " +
		strings.Join(svc, ",\n    ") + "\n  ],\n  sockets = [\n    " + strings.Join(sockets, ",\n    ") + "\n  ],\n);\n"
	path := filepath.Join(dir, "bare.capnp")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	p, err := engine.Start(bin, path, false, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	out.proc = p
	b.Cleanup(func() { p.Stop(5 * time.Second) })
	return out
}

// answerOnce requests worker i of the bare process once; nil when it
// answered its hello.
func (w *bare) answerOnce(i int) error {
	tr := engine.UnixTransport(w.sockets[i])
	tr.DisableKeepAlives = true
	defer tr.CloseIdleConnections()
	status, body, err := get(&http.Client{Transport: tr}, "http://bare", "bare", "/")
	if err == nil && (status != http.StatusOK || body != w.bodies[i]) {
		err = fmt.Errorf("bare worker %d answered %d %q", i, status, body)
	}
	return err
}

// waitAnswer polls worker i every interval until it answers (or the
// process exits) and returns when it did.
func (w *bare) waitAnswer(b *testing.B, i int, interval time.Duration) time.Time {
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := w.answerOnce(i)
		if err == nil {
			return time.Now()
		}
		select {
		case <-w.proc.Done():
			b.Fatalf("bare workerd exited: %v", w.proc.Err())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("bare workerd never answered: %v", err)
		}
		time.Sleep(interval)
	}
}
