package provider_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestAccRecoverAfterKilledApply kills (SIGKILL) a 60-resource tofu apply
// after 15 creates were committed: the host then holds resources no state
// records. `takoform recover` on the next saved plan prints one import
// block per orphan, exactly those, changing nothing; saved beside the
// configuration, one apply adopts them and creates the rest, and the plan
// is then empty (spec/decisions/0007-orphan-recovery.md).
func TestAccRecoverAfterKilledApply(t *testing.T) {
	t.Parallel()
	const space, n = "Prod North", 60
	h, g := gatedHost(t, 300*time.Millisecond)
	c := hostClient(t, h)
	d := newTofuDir(t, edgeRegistry(t), kvConfig(h, space, "kill", n))
	apply := d.start("apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=10")
	for g.count() < 15 && !apply.exited() {
		time.Sleep(5 * time.Millisecond)
	}
	apply.signal(syscall.SIGKILL)
	_, _ = apply.wait()
	g.settle() // the provider's requests already sent finish on their own
	held, orphans := onHost(t, c, d, space, "kill", n)
	if len(orphans) == 0 || held == n {
		t.Fatalf("the killed apply left %d of %d on the host, %d without state: not an apply killed mid-way", held, n, len(orphans))
	}
	t.Logf("SIGKILL after 15 committed creates: %d on the host, %d in no state", held, len(orphans))

	planJSON, _ := d.savedPlan()
	planPath := filepath.Join(d.dir, "plan.json")
	if err := os.WriteFile(planPath, planJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	stateBefore, _ := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	recoverTF := filepath.Join(d.dir, "recover.tf")
	args := []string{"recover", "--plan", planPath, "--endpoint", h.URL, "--token", hosttest.TokenA1, "--out", recoverTF}
	var out, errOut bytes.Buffer
	if code := cli.Main(args, &out, &errOut); code != 0 {
		t.Fatalf("takoform recover exited %d:\n%s%s", code, out.String(), errOut.String())
	}
	blocks, err := os.ReadFile(recoverTF)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(blocks), "import {"); got != len(orphans) {
		t.Fatalf("recover printed %d import blocks for %d orphans:\n%s", got, len(orphans), blocks)
	}
	if stateAfter, _ := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate")); !bytes.Equal(stateBefore, stateAfter) {
		t.Fatal("takoform recover changed the state file")
	}
	if _, again := onHost(t, c, d, space, "kill", n); len(again) != len(orphans) {
		t.Fatalf("takoform recover changed the host: %d orphans, then %d", len(orphans), len(again))
	}
	out.Reset()
	errOut.Reset()
	if code := cli.Main(args, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "never overwrites") {
		t.Fatalf("recover --out onto an existing file: exit %d:\n%s", code, errOut.String())
	}

	d.must("apply", "-auto-approve", "-input=false", "-no-color")
	if held := requireNoOrphans(t, c, d, space, "kill", n); held != n || len(d.state()) != n {
		t.Fatalf("after recovery the host holds %d and state %d, want %d", held, len(d.state()), n)
	}
	d.planEmpty()
}
