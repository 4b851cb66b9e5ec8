package replicatest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

var (
	linOps    = flag.Int("replicatest.ops", 2000, "requests the linearizability test records (a replica is killed and restarted once per 1,000 of them, at least twice)")
	linVisual = flag.String("replicatest.visualize", "", "write the linearizability check's porcupine visualization (HTML) to this file")
)

// linClient is one of the test's clients: its history, and what it last
// learnt about each name (the fences it sends, possibly stale on purpose).
type linClient struct {
	id    int
	e     *conformance.Env
	rng   *rand.Rand
	space string
	ref   form.FormRef
	view  map[string]*wire.Resource // nil: absent or unknown
	start time.Time
	seq   *atomic.Int64
	ops   *atomic.Int64
	hist  []porcupine.Operation
}

func (c *linClient) now() int64 { return int64(time.Since(c.start)) }

func (c *linClient) record(call int64, in linIn, out linOut) {
	ret := c.now()
	if out.unknown {
		ret = math.MaxInt64
	}
	c.hist = append(c.hist, porcupine.Operation{ClientId: c.id, Input: in, Call: call, Output: out, Return: ret})
	c.ops.Add(1)
}

// answer turns an HTTP answer into the model's output: unknown when the
// request was cut (the proxy's 502 or no answer) or answered with a
// retryable backend_unavailable / resource_busy.
func answer(raw *conformance.Raw, err error) (linOut, *wire.Resource) {
	if err != nil {
		return linOut{unknown: true}, nil
	}
	switch raw.Status {
	case 200, 201:
		res, err := decodeResource(raw)
		if err != nil {
			return linOut{code: "malformed: " + err.Error()}, nil
		}
		return observed(strconv.Itoa(raw.Status), res), res
	case 204:
		return linOut{code: "204"}, nil
	}
	code := refusal(raw)
	if code == "" || code == wire.BackendUnavailable || code == wire.ResourceBusy {
		return linOut{unknown: true}, nil
	}
	return linOut{code: string(code)}, nil
}

// observed is the model's output for a resource answered with code; a
// resource the model cannot read is an output no state explains.
func observed(code string, res *wire.Resource) linOut {
	v, err := retention(res)
	g, gerr := strconv.Atoi(res.Metadata.Generation)
	if err != nil || gerr != nil {
		return linOut{code: fmt.Sprintf("malformed: spec %v, generation %v", err, gerr)}
	}
	return linOut{code: code, uid: res.Metadata.UID, gen: g, value: v}
}

func retention(res *wire.Resource) (int, error) {
	var spec struct {
		Retention int `json:"messageRetentionSeconds"`
	}
	err := json.Unmarshal(res.Spec, &spec)
	return spec.Retention, err
}

// step issues one random request on one of names.
func (c *linClient) step(ctx context.Context, names []string) {
	name := names[c.rng.IntN(len(names))]
	cur := c.view[name]
	p := c.rng.IntN(100)
	switch {
	case p < 25 || (cur == nil && p < 45):
		c.read(ctx, name)
	case cur == nil || p < 40:
		c.mutate(ctx, linIn{kind: linCreate, name: name, value: 60 + c.rng.IntN(3)}, nil)
	case p < 85:
		c.mutate(ctx, linIn{kind: linUpdate, name: name, value: 60 + c.rng.IntN(3), uid: cur.Metadata.UID, gen: observed("200", cur).gen}, cur)
	default:
		c.mutate(ctx, linIn{kind: linDelete, name: name, gen: observed("200", cur).gen}, cur)
	}
}

func (c *linClient) read(ctx context.Context, name string) {
	call := c.now()
	res, err := read(ctx, c.e, c.space, c.ref, name)
	switch {
	case client.IsNotFound(err):
		c.record(call, linIn{op: int(c.seq.Add(1)), kind: linRead, name: name}, linOut{code: "404"})
		c.view[name] = nil
	case err == nil:
		c.record(call, linIn{op: int(c.seq.Add(1)), kind: linRead, name: name}, observed("200", res))
		c.view[name] = res
	}
	// A read that failed tells nothing and changed nothing: not recorded.
}

// mutate prepares (a refused or failed prepare changed nothing and is not
// recorded) and sends one mutation; a cut answer is either given up
// (unknown outcome) or resent under the same key, as a client would.
func (c *linClient) mutate(ctx context.Context, in linIn, cur *wire.Resource) {
	in.key = newKey()
	req := c.e.RequestIn(c.space, c.ref, in.name, queueSpec(in.value))
	var body []byte
	if in.kind != linDelete {
		var err error
		if body, err = prepared(ctx, c.e, req, cur); err != nil {
			c.view[in.name] = nil
			return
		}
	}
	for attempt := 0; attempt < 4; attempt++ {
		in.op = int(c.seq.Add(1))
		call := c.now()
		var raw *conformance.Raw
		var err error
		switch in.kind {
		case linCreate:
			raw, err = putApply(ctx, c.e, req, body, in.key, "", "")
		case linUpdate:
			raw, err = putApply(ctx, c.e, req, body, in.key, strconv.Itoa(in.gen), "")
		case linDelete:
			raw, err = deleteRaw(ctx, c.e, c.space, c.ref, in.name, strconv.Itoa(in.gen), in.key)
		}
		out, res := answer(raw, err)
		c.record(call, in, out)
		if !out.unknown {
			c.view[in.name] = res
			return
		}
		c.view[in.name] = nil
		if c.rng.IntN(2) == 0 {
			return // given up: the outcome stays unknown
		}
	}
}

// TestLinearizableAcrossReplicasAndKills records a history of 16 clients
// issuing fenced creates, updates, deletes and reads on twelve names
// through the round-robin proxy over two replicas, while replica 1 is
// SIGKILLed and restarted (once per 1,000 requests), and checks it with porcupine against the
// lane's model (model_test.go): 0 violations. -replicatest.ops=N records
// a longer history.
func TestLinearizableAcrossReplicasAndKills(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{})
	ctx := context.Background()
	qref := ref(t, f.proxy, "AtLeastOnceQueue")
	// Twelve names: porcupine's search grows exponentially with the
	// requests of one name in flight together (an unknown outcome, cut by
	// a kill, stays in flight to the end), so fewer clients per name keep
	// the check within its bound while every name still sees contention
	// (with six, a history of 11 unknown outcomes once ran past the bound).
	var names []string
	for range 12 {
		names = append(names, f.proxy.Name("lin"))
	}
	const clients = 16
	var seq, ops atomic.Int64
	var stop atomic.Bool
	start := time.Now()
	cs := make([]*linClient, clients)
	var wg sync.WaitGroup
	for i := range cs {
		cs[i] = &linClient{id: i, e: f.proxy, rng: rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano()))), space: f.proxy.Space, ref: qref,
			view: map[string]*wire.Resource{}, start: start, seq: &seq, ops: &ops}
		wg.Add(1)
		go func(c *linClient) {
			defer wg.Done()
			for !stop.Load() {
				c.step(ctx, names)
			}
		}(cs[i])
	}
	total := int64(*linOps)
	waitOps := func(n int64) {
		for ops.Load() < n {
			runtimeYield()
		}
	}
	// Kill and restart replica 1 once per 1,000 requests (at least twice),
	// at points counted in recorded requests.
	victim, cycles := len(f.c.Replicas)-1, max(2, total/1000)
	for cycle := int64(0); cycle < cycles; cycle++ {
		waitOps(total * (1 + 2*cycle) / (2*cycles + 1))
		f.c.Kill(victim)
		if len(f.c.Replicas) == 1 {
			f.c.Restart(victim) // SQLite debug mode: the only replica comes back
		}
		waitOps(total * (2 + 2*cycle) / (2*cycles + 1))
		if len(f.c.Replicas) > 1 {
			f.c.Restart(victim)
		}
	}
	waitOps(total)
	stop.Store(true)
	wg.Wait()

	var history []porcupine.Operation
	sent := map[string]int{}
	for _, c := range cs {
		for _, op := range c.hist {
			if in := op.Input.(linIn); in.kind != linRead {
				sent[in.key]++
			}
		}
	}
	unknown, resent := 0, 0
	for _, c := range cs {
		for _, op := range c.hist {
			in := op.Input.(linIn)
			in.tracked = in.kind != linRead && sent[in.key] > 1
			op.Input = in
			if op.Output.(linOut).unknown {
				unknown++
			}
			if in.tracked {
				resent++
			}
			history = append(history, op)
		}
	}
	checkStart := time.Now()
	res, info := porcupine.CheckOperationsVerbose(linModel, history, 5*time.Minute)
	t.Logf("%d requests recorded (%d with unknown outcome, %d sent under a resent key), checked: %s in %v", len(history), unknown, resent, res, time.Since(checkStart).Round(time.Millisecond))
	if *linVisual != "" || res != porcupine.Ok {
		out := *linVisual
		if out == "" {
			out = filepath.Join(os.TempDir(), fmt.Sprintf("replicatest-linearizability-%d.html", time.Now().UnixNano()))
		}
		if err := porcupine.VisualizePath(linModel, info, out); err != nil {
			t.Logf("visualize: %v", err)
		} else {
			t.Logf("porcupine visualization: %s", out)
		}
	}
	switch res {
	case porcupine.Illegal:
		t.Fatal("the history is not linearizable against the lane's model (see the visualization)")
	case porcupine.Unknown:
		t.Fatal("the check did not finish within 5 minutes; record fewer requests (-replicatest.ops)")
	}
}
