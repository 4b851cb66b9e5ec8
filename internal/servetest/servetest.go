// Package servetest runs the real `takoform host serve` command in-process
// for tests (cli.Run, a real SQLite file in a temporary directory), reads
// its first line and lets the test read its log while it serves. Tests of
// what the command does at start (TLS, public URL, refusals, SIGHUP
// reloads) use it; decision spec/decisions/0008-deployable-host.md.
package servetest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/syncbuf"
)

// Host is a running `takoform host serve`.
type Host struct {
	// First is the first stdout line, "takoform host serving <url> (listen <addr>, …)".
	First string
	// URL is <url> of First: the public URL, or scheme://listen address.
	URL string
	// Listen is the address the host listens on.
	Listen string
	// Data is the SQLite file.
	Data string
	log  *Log
	out  *Log
}

// Log is the host's stderr, readable while it is written.
type Log = syncbuf.Buffer

// Start runs `takoform host serve --data <temp file> args…` until the test
// ends and returns once it printed its first line (failing the test if it
// exits first). While any host runs the test binary also holds SIGHUP, so
// a SIGHUP the test sends (SIGHUP) reaches the host and never ends the
// test binary.
func Start(t testing.TB, args ...string) *Host {
	t.Helper()
	hold := make(chan os.Signal, 1)
	signal.Notify(hold, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(hold) })
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	h := &Host{Data: filepath.Join(t.TempDir(), "host.db"), log: &Log{}, out: &Log{}}
	done := make(chan int, 1)
	go func() {
		code := cli.Run(ctx, append([]string{"host", "serve", "--data", h.Data}, args...), pw, h.log)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() { cancel(); <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("host serve %q printed no line (%v); stderr:\n%s", args, err, h.log.String())
	}
	go func() { _, _ = io.Copy(h.out, pr) }()
	h.First = strings.TrimSpace(line)
	f := strings.Fields(h.First)
	if len(f) < 6 || strings.Join(f[:3], " ") != "takoform host serving" || f[4] != "(listen" {
		t.Fatalf("first line %q is not `takoform host serving <url> (listen <addr>, …)`", h.First)
	}
	h.URL, h.Listen = f[3], strings.TrimSuffix(f[5], ",")
	return h
}

// Output returns what the host wrote to stdout after its first line so
// far (the worker ingress's address, notices).
func (h *Host) Output() string { return h.out.String() }

// Log returns what the host wrote to stderr so far.
func (h *Host) Log() string { return h.log.String() }

// WaitLog waits until the host's stderr holds want (the host logs each
// reload); it fails the test after 20 s without it.
func (h *Host) WaitLog(t testing.TB, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(h.log.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the host never logged %q; stderr:\n%s", want, h.log.String())
		}
	}
}

// SIGHUP sends SIGHUP to this process: every host started here reloads.
func SIGHUP(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}
