package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

// TestHostProcess is not a test: it is the host process the kill test
// starts (the test binary re-executed), serving with the flags in
// TAKOFORM_TEST_HOST_ARGS.
func TestHostProcess(t *testing.T) {
	args := os.Getenv("TAKOFORM_TEST_HOST_ARGS")
	if args == "" {
		t.Skip("helper process for TestAcknowledgedCreatesSurviveSIGKILL")
	}
	os.Exit(Main(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startHostProcess(t *testing.T, addr, data string) *exec.Cmd {
	args := strings.Join([]string{"host", "serve", "--listen", addr, "--data", data, "--dev-token", "tok"}, "\x1f")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TAKOFORM_TEST_HOST_ARGS="+args)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd
}

func connect(t *testing.T, addr string) *client.Client {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := client.New(context.Background(), "http://"+addr, client.Options{Token: "tok"})
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("host at %s did not come up: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func kvRef(t *testing.T, c *client.Client) wire.ResourceRequest {
	profiles, err := c.SupportForms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.Kind == "EdgeKVNamespace" && p.FormRef.APIVersion == "edge.forms.takoform.com/v1alpha1" {
			return wire.ResourceRequest{APIVersion: p.FormRef.APIVersion, Kind: p.FormRef.Kind, Form: wire.FormReference{FormRef: *p.FormRef},
				Metadata: wire.Metadata{Space: "kill test"}, Spec: json.RawMessage(`{}`)}
		}
	}
	t.Fatal("the host serves no EdgeKVNamespace")
	return wire.ResourceRequest{}
}

func create(ctx context.Context, c *client.Client, req wire.ResourceRequest, name string) (*wire.Resource, error) {
	req.Metadata.Name = name
	p, err := c.Prepare(ctx, req, "")
	if err != nil {
		return nil, err
	}
	return c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
}

// TestAcknowledgedCreatesSurviveSIGKILL kills the host process with
// SIGKILL during concurrent creates and finds every acknowledged create
// after a restart on the same file.
func TestAcknowledgedCreatesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	data := filepath.Join(t.TempDir(), "host.db")
	addr := freePort(t)
	cmd := startHostProcess(t, addr, data)
	c := connect(t, addr)
	req := kvRef(t, c)

	var mu sync.Mutex
	acked := map[string]string{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("kv-%d-%d", w, i)
				res, err := create(ctx, c, req, name)
				if err != nil {
					return // the host is gone; unacknowledged work may or may not exist
				}
				mu.Lock()
				acked[name] = res.Metadata.UID
				mu.Unlock()
			}
		}(w)
	}
	for {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	cancel()
	wg.Wait()

	startHostProcess(t, addr, data)
	c = connect(t, addr)
	mu.Lock()
	defer mu.Unlock()
	for name, uid := range acked {
		res, err := c.Read(context.Background(), client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: name})
		if err != nil {
			t.Fatalf("acknowledged create %s is missing after SIGKILL and restart: %v", name, err)
		}
		if res.Metadata.UID != uid {
			t.Fatalf("%s: uid %s after restart, %s when acknowledged", name, res.Metadata.UID, uid)
		}
	}
	t.Logf("%d acknowledged creates all present after SIGKILL", len(acked))
}
