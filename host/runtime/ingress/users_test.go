package ingress_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestShardsRunAsTheirOwnUsers: on a host running as root, each tenant's
// workerd runs as its own unprivileged uid — neither root nor another
// tenant's (spec/runtime-v1.md §10.4) — and still serves its workers,
// reaching its sockets in the runtime directory.
func TestShardsRunAsTheirOwnUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("shards switch users only on a host running as root; this test runs as uid", os.Geteuid())
	}
	bin := enginetest.Binary(t)
	if err := engine.ReachableByOthers(bin, os.TempDir()); err != nil { // the runtime directory is made there
		t.Skipf("another user cannot run the engine from here (%v); the host then runs shards as itself, which its State says", err)
	}
	h, front := startHost(t, bin)
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostA := deploy(t, e, "tenant a")
	waitFor(t, front, hostA, "tenant a")
	w := deployWorkerAs(t, e, e.B, "tenant b")
	ep, err := e.Create(ctx, e.B, "WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": conformance.Rel("ModuleWorker", w)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, front, endpointHostname(t, ep.Status.Outputs), "tenant b")
	uids := map[string]string{}
	for tenant, pid := range h.Runtime.Processes() {
		uids[tenant] = processUID(t, pid)
	}
	a, b := uids["tenant-a"], uids["tenant-b"]
	if a == "" || b == "" || a == "0" || b == "0" || a == b {
		t.Errorf("shard uids by tenant = %v, want two different non-root uids", uids)
	}
	if !strings.Contains(h.Runtime.State(), "each shard runs as its own user") {
		t.Errorf("State() = %q, want it to say each shard runs as its own user", h.Runtime.State())
	}
}

// processUID is the real uid of process pid, from /proc/PID/status.
func processUID(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return ""
}
