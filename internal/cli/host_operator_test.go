package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/syncbuf"
	"github.com/takoform/takoform/wire"
)

// lockedBuffer is a child process's output in these tests.
type lockedBuffer = syncbuf.Buffer

// jsonLines returns the JSON log lines of b with msg.
func jsonLines(b *lockedBuffer, msg string) []map[string]any {
	lines, _ := b.JSONLines()
	var out []map[string]any
	for _, m := range lines {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServeLogsMetricsAndDrains runs `host serve` as a process with JSON
// logs and a separate metrics listener: it logs a start line (version,
// listen, store, families: the built-in family's two editions, one per
// lane), serves /metrics only on --metrics-listen, and
// on SIGTERM lets the in-flight create finish within --shutdown-grace,
// saying so in the log, before it exits 0.
func TestServeLogsMetricsAndDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	// Both listeners pick free ports themselves (no port handed over by the
	// test can be taken by a parallel package meanwhile); the log names them.
	args := []string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "host.db"), "--dev-token", "tok",
		"--log-format", "json", "--metrics-listen", "127.0.0.1:0", "--provisioning-delay", "3s", "--shutdown-grace", "20s"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+strings.Join(args, "\x1f"))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	var start, metrics []map[string]any
	for deadline := time.Now().Add(30 * time.Second); len(start) == 0 || len(metrics) == 0; time.Sleep(20 * time.Millisecond) {
		start, metrics = jsonLines(&stderr, "takoform host started"), jsonLines(&stderr, "metrics listening")
		select {
		case <-exited:
			t.Fatalf("host serve exited before it started:\n%s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start and metrics lines within 30s:\n%s", stderr.String())
		}
	}
	addr, _ := start[0]["listen"].(string)
	metricsAddr, _ := metrics[0]["listen"].(string)
	c := connect(t, addr)
	if len(start) != 1 || start[0]["version"] == "" || !strings.HasPrefix(start[0]["store"].(string), "sqlite:") || start[0]["families"] != "edge.forms.takoform.com/v1alpha1,edge.forms.takoform.com/v1beta1" ||
		start[0]["forms"] != float64(27) || start[0]["lanes"] != "v1alpha3=12,v1beta1=15" {
		t.Fatalf("start line: %v\n%s", start, stderr.String())
	}
	if code, _ := scrape(t, "http://"+addr+"/metrics"); code != 404 {
		t.Fatalf("/metrics on the API listener with --metrics-listen: %d", code)
	}

	req := kvRef(t, c)
	req.Metadata.Name = "drained"
	p, err := c.Prepare(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.ApplyAndWait(context.Background(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
			Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, text := scrape(t, "http://"+metricsAddr+"/metrics")
		if code == 200 && strings.Contains(text, "takoform_http_requests_in_flight 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the create never showed in flight on --metrics-listen: %d\n%s", code, text)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the create in flight at SIGTERM: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("host serve did not exit after SIGTERM:\n%s", stderr.String())
	}
	if !cmd.ProcessState.Success() {
		t.Fatalf("host exit after SIGTERM: %v\n%s", cmd.ProcessState, stderr.String())
	}
	shut := jsonLines(&stderr, "shutting down")
	if len(shut) != 1 || shut[0]["grace"] != float64(20*time.Second) || shut[0]["inFlight"] != float64(1) {
		t.Fatalf("shutdown line: %v\n%s", shut, stderr.String())
	}
	if len(jsonLines(&stderr, "stopped")) != 1 {
		t.Fatalf("no stopped line:\n%s", stderr.String())
	}
	var put map[string]any
	for _, l := range jsonLines(&stderr, "request") {
		if l["method"] == "PUT" {
			put = l
		}
	}
	if put == nil || put["status"] != float64(201) || put["tenant"] != "dev" || strings.Contains(stderr.String(), "Bearer") {
		t.Fatalf("request line of the drained create: %v", put)
	}
}

// TestServeRefusesBadOperatorFlags: each bad value is refused before
// anything is opened, naming the flag and what it takes.
func TestServeRefusesBadOperatorFlags(t *testing.T) {
	base := []string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "host.db"), "--dev-token", "tok"}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--log-format", "xml"}, `--log-format "xml" is not a format: use text or json`},
		{[]string{"--log-level", "loud"}, `--log-level "loud" is not a level`},
		{[]string{"--write-timeout", "5s"}, "--write-timeout 5s must exceed --read-timeout 1m0s plus --sync-budget 10s (1m10s)"},
		{[]string{"--write-timeout", "65s"}, "--write-timeout 1m5s must exceed --read-timeout 1m0s plus --sync-budget 10s (1m10s)"},
		{[]string{"--read-timeout", "2m", "--write-timeout", "2m"}, "raise --write-timeout (or leave it out: it defaults to 2m40s)"},
		{[]string{"--shutdown-grace", "0s"}, "--shutdown-grace must be a positive duration"},
		{[]string{"--max-in-flight", "0"}, "--max-in-flight must be positive"},
		{[]string{"--quota-resources", "-1"}, "--quota-resources cannot be negative"},
		{[]string{"--tenant-rate", "-2"}, "--tenant-rate cannot be negative"},
	} {
		code, _, errOut := run(append(append([]string{}, base...), c.flags...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.flags, code, errOut, c.want)
		}
	}
	if _, err := os.Stat(base[5]); !os.IsNotExist(err) {
		t.Errorf("a refused start created the data file: %v", err)
	}
}

// TestHostBackupCommand: `host backup` writes a copy that serves, and
// refuses to overwrite.
func TestHostBackupCommand(t *testing.T) {
	dir := t.TempDir()
	data, out := filepath.Join(dir, "host.db"), filepath.Join(dir, "copy.db")
	addr := freePort(t)
	startHostProcess(t, addr, data)
	c := connect(t, addr)
	if _, err := create(context.Background(), c, kvRef(t, c), "kept"); err != nil {
		t.Fatal(err)
	}
	if code, stdout, errOut := run("host", "backup", "--data", data, out); code != 0 || !strings.Contains(stdout, "written to "+out) {
		t.Fatalf("backup: exit %d %q %q", code, stdout, errOut)
	}
	if code, _, errOut := run("host", "backup", "--data", data, out); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("backup over the copy: exit %d %q", code, errOut)
	}
	addr2 := freePort(t)
	startHostProcess(t, addr2, out)
	c2 := connect(t, addr2)
	req := kvRef(t, c2)
	if _, err := c2.Read(context.Background(), client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: "kept"}); err != nil {
		t.Fatalf("the restored copy: %v", err)
	}
}

// TestOperatorLogger: --log-format picks the encoding and --log-level
// drops what is less severe.
func TestOperatorLogger(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		l, err := (&operatorFlags{logFormat: format, logLevel: "warn"}).logger(&b)
		if err != nil {
			t.Fatal(err)
		}
		l.Info("request", "route", "/x")
		l.Warn("shutdown grace expired")
		out := strings.TrimSpace(b.String())
		if strings.Contains(out, "request") || !strings.Contains(out, "shutdown grace expired") || strings.Count(out, "\n") != 0 {
			t.Errorf("%s at warn wrote %q", format, out)
		}
		if format == "json" && !json.Valid([]byte(out)) {
			t.Errorf("json format wrote %q", out)
		}
	}
}

// TestServeAnswersASlowBody: `host serve --read-timeout 1s` with the write
// timeout left to its default cuts a body trickled one byte per 200ms and
// the client, over real TCP, receives the body_timeout envelope.
func TestServeAnswersASlowBody(t *testing.T) {
	addr := freePort(t)
	args := strings.Join([]string{"host", "serve", "--listen", addr, "--data", filepath.Join(t.TempDir(), "host.db"), "--dev-token", "tok", "--read-timeout", "1s"}, "\x1f")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+args)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	connect(t, addr) // waits until the host answers
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s/resources/validate HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", wire.V1alpha3.APIBase, addr)
	answered := make(chan struct{})
	go func() {
		for range 100 {
			select {
			case <-answered:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{' '}); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	if err != nil {
		t.Fatalf("no answer to a body slower than --read-timeout: %v", err)
	}
	defer resp.Body.Close()
	var env wire.ErrorEnvelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != 400 || env.Error.Code != wire.InvalidArgument || env.Error.HostCode != "body_timeout" {
		t.Fatalf("slow body: %d %+v (%v); want 400 invalid_argument body_timeout", resp.StatusCode, env.Error, err)
	}
}
