package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// answerGate sits in front of the host. Every resource PUT reaches the
// host; its answer is held back for hold (the window in which a committed
// mutation waits for its answer), counted in committed, and dropped (the
// connection is aborted after the host committed) for the names in lose;
// the names in refuse never reach the host and lose their answer too.
type answerGate struct {
	next      http.Handler
	hold      time.Duration
	mu        sync.Mutex
	committed int
	inflight  int // PUTs whose answer has not been written yet
	lose      map[string]bool
	refuse    map[string]bool
}

func (g *answerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := wire.V1alpha3.APIBase + "/resources/"
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/") // group, version, kind, name
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, prefix) || len(segs) != 4 {
		g.next.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	lose, refuse := g.lose[segs[3]], g.refuse[segs[3]]
	g.inflight++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inflight--
		g.mu.Unlock()
	}()
	if refuse {
		panic(http.ErrAbortHandler)
	}
	rec := httptest.NewRecorder()
	g.next.ServeHTTP(rec, r)
	g.mu.Lock()
	if rec.Code < 300 {
		g.committed++
	}
	g.mu.Unlock()
	if lose {
		panic(http.ErrAbortHandler) // committed; the answer never arrives
	}
	time.Sleep(g.hold)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// settle waits until no PUT is in flight.
func (g *answerGate) settle() {
	for {
		g.mu.Lock()
		n := g.inflight
		g.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (g *answerGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.committed
}

func (g *answerGate) set(lose, refuse map[string]bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lose, g.refuse = lose, refuse
}

// gatedHost starts a host behind an answerGate; the provider talks to the
// gate, the test's client to the host itself.
func gatedHost(t *testing.T, hold time.Duration) (*hosttest.Host, *answerGate) {
	h := accHost(t, hosttest.Options{})
	g := &answerGate{next: h.Server, hold: hold}
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	gated := *h
	gated.URL = gs.URL
	return &gated, g
}

// kvConfig is n EdgeKVNamespace resources named prefix-0 … prefix-(n-1).
func kvConfig(h *hosttest.Host, space, prefix string, n int) string {
	return providerBlock(h, space) + fmt.Sprintf(`
resource "takoform_edge_kv_namespace" "kv" {
  count = %d
  name  = "%s-${count.index}"
}
`, n, prefix)
}

// onHost reads prefix-0 … prefix-(n-1) at the host: how many it holds, and
// those no state entry records bound to the host's uid (orphans).
func onHost(t *testing.T, c *client.Client, d *tofuDir, space, prefix string, n int) (held int, orphans []string) {
	t.Helper()
	ref := edgeRef(t, "EdgeKVNamespace")
	recorded := map[string]string{}
	for _, e := range d.state() {
		recorded[fmt.Sprint(e.Attrs["name"])] = fmt.Sprint(e.Attrs["uid"])
	}
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		res, err := c.Read(context.Background(), client.Address{Space: space, Ref: ref, Name: name})
		if client.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		held++
		if recorded[name] != res.Metadata.UID {
			orphans = append(orphans, fmt.Sprintf("%s (uid %s, state records %q)", name, res.Metadata.UID, recorded[name]))
		}
	}
	return held, orphans
}

// requireNoOrphans: every name the host holds has a state entry bound to
// the host's uid; it returns how many the host holds.
func requireNoOrphans(t *testing.T, c *client.Client, d *tofuDir, space, prefix string, n int) int {
	t.Helper()
	held, orphans := onHost(t, c, d, space, prefix, n)
	if len(orphans) > 0 {
		t.Fatalf("on the host without a state entry: %v", orphans)
	}
	return held
}

// TestAccInterruptedApplyRecordsSentChanges interrupts (SIGINT) a
// 60-resource apply after 1, 20 and 40 creates were committed, while every
// committed create's answer is still on its way: each change already sent
// is waited for and recorded, so no resource is on the host without a
// state entry; the re-apply converges and the plan is then empty
// (spec/decisions/0006-idempotency-keys-per-mutation.md).
func TestAccInterruptedApplyRecordsSentChanges(t *testing.T) {
	t.Parallel()
	const space, n = "Prod North", 60
	h, g := gatedHost(t, 300*time.Millisecond)
	c := hostClient(t, h)
	for _, at := range []int{1, 20, 40} {
		prefix := fmt.Sprintf("int%d", at)
		d := newTofuDir(t, edgeRegistry(t), kvConfig(h, space, prefix, n))
		before := g.count()
		apply := d.start("apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=10")
		for g.count()-before < at && !apply.exited() {
			time.Sleep(5 * time.Millisecond)
		}
		apply.signal(syscall.SIGINT)
		out, err := apply.wait()
		if err == nil {
			t.Fatalf("interrupted after %d creates, the apply still succeeded:\n%s", at, out)
		}
		held := requireNoOrphans(t, c, d, space, prefix, n)
		for _, name := range interruptedNames(out) { // the repair says the change was not sent
			if _, err := c.Read(context.Background(), client.Address{Space: space, Ref: edgeRef(t, "EdgeKVNamespace"), Name: name}); !client.IsNotFound(err) {
				t.Errorf("%s was reported interrupted before its change was sent, but the host holds it (%v)", name, err)
			}
		}
		if held < at || held == n {
			t.Fatalf("interrupted after %d creates, the host holds %d of %d: not an interruption mid-apply", at, held, n)
		}
		t.Logf("SIGINT after %d committed creates: %d on the host, each recorded in state; %d refused as interrupted before sending", at, held, len(interruptedNames(out)))
		d.must("apply", "-auto-approve", "-input=false", "-no-color")
		if held := requireNoOrphans(t, c, d, space, prefix, n); held != n || len(d.state()) != n {
			t.Fatalf("the re-apply left %d on the host and %d in state, want %d", held, len(d.state()), n)
		}
		d.planEmpty()
	}
}

// interruptedNames are the resource names of the
// takoform.provider/interrupted diagnostics in a tofu output.
func interruptedNames(out string) []string {
	var names []string
	for _, block := range strings.Split(out, "Error: ")[1:] {
		if !strings.Contains(block, "Code: takoform.provider/interrupted") {
			continue
		}
		if m := resourceLine.FindStringSubmatch(block); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

var resourceLine = regexp.MustCompile(`Resource: takoform_edge_kv_namespace \([^/]*/([^)]*)\)`)

// TestAccLostAnswerRepairIsTrue follows the repair sentence of a lost
// answer step by step: one create is committed but its answer lost, one
// never reaches the host. The diagnostic says to apply again, that a
// change the host never received is made then, and that a create whose
// answer was lost is refused as already existing, naming the import ID
// that adopts it; the next apply does exactly that, and an import block
// with that ID converges to an empty plan.
func TestAccLostAnswerRepairIsTrue(t *testing.T) {
	t.Parallel()
	const space = "Prod North"
	h, g := gatedHost(t, 0)
	c := hostClient(t, h)
	d := newTofuDir(t, edgeRegistry(t), kvConfig(h, space, "lost", 2))
	g.set(map[string]bool{"lost-0": true}, map[string]bool{"lost-1": true})
	out, err := d.run("apply", "-auto-approve", "-input=false", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	repair := "then apply again: a change the host never received is made then, and a create whose answer was lost is refused as already existing, naming the import ID that adopts it."
	if err == nil || strings.Count(flat, repair) != 2 || !strings.Contains(flat, "takoform.provider/host-unreachable") {
		t.Fatalf("want two lost-answer diagnostics with the repair %q:\n%s", repair, out)
	}
	if held, orphans := onHost(t, c, d, space, "lost", 2); held != 1 || len(orphans) != 1 {
		t.Fatalf("the host holds %d of the two (orphans %v); want the committed one, unrecorded", held, orphans)
	}

	g.set(nil, nil)
	out, err = d.run("apply", "-auto-approve", "-input=false", "-no-color")
	flat = strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, `the import ID is "Prod North/lost-0"`) || !strings.Contains(flat, "takoform.provider/already-exists") {
		t.Fatalf("apply again: the create whose answer was lost must be refused as already existing with its import ID:\n%s", out)
	}
	if st := d.state(); len(st) != 1 || st[0].Attrs["name"] != "lost-1" {
		t.Fatalf("apply again: the change the host never received must be made then; state holds %v", st)
	}

	d.write(kvConfig(h, space, "lost", 2) + `
import {
  to = takoform_edge_kv_namespace.kv[0]
  id = "Prod North/lost-0"
}
`)
	d.must("apply", "-auto-approve", "-input=false", "-no-color")
	if n := requireNoOrphans(t, c, d, space, "lost", 2); n != 2 || len(d.state()) != 2 {
		t.Fatalf("after the import the host holds %d and state %d, want 2 and 2", n, len(d.state()))
	}
	d.planEmpty()
}
