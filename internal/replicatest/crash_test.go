package replicatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// sent is one create as it went over the wire, kept to resend it.
type sent struct {
	req  wire.ResourceRequest
	body []byte
	key  string
}

// TestKillUnderCreateLoad: 16 clients create queues through the proxy
// while replica 1 is SIGKILLed and later restarted. Every acknowledged
// create (201) is present afterwards under the UID it was acknowledged
// with; every create whose answer the kill cut (unknown outcome) resolves,
// when resent under its idempotency key, to exactly one 201 — a replay if
// it had executed — and no UID is handed out twice
// (ARCHITECTURE.md §5: acknowledged means durable).
func TestKillUnderCreateLoad(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{})
	ctx := context.Background()
	qref := ref(t, f.proxy, "AtLeastOnceQueue")
	space := f.proxy.Space
	const clients, phase = 16, 150
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // name -> uid
		unknown []sent
		count   atomic.Int64
		stop    atomic.Bool
		failed  = make(chan error, clients)
	)
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				req := f.proxy.RequestIn(space, qref, fmt.Sprintf("load-%d-%d", w, i), queueSpec(3600))
				body, err := prepared(ctx, f.proxy, req, nil)
				if err != nil {
					continue // a prepare cut by the kill changed nothing; the name is simply not used
				}
				s := sent{req, body, newKey()}
				raw, err := putApply(ctx, f.proxy, req, body, s.key, "", "")
				switch {
				case err == nil && raw.Status == 201:
					res, err := decodeResource(raw)
					if err != nil {
						failed <- err
						return
					}
					mu.Lock()
					acked[req.Metadata.Name] = res.Metadata.UID
					mu.Unlock()
					count.Add(1)
				case err != nil || refusal(raw) == "" || refusal(raw) == wire.BackendUnavailable:
					mu.Lock()
					unknown = append(unknown, s)
					mu.Unlock()
				default:
					failed <- fmt.Errorf("create %s answered %d %s", req.Metadata.Name, raw.Status, raw.Body)
					return
				}
			}
		}(w)
	}
	waitFor := func(n int64) {
		for count.Load() < n && len(failed) == 0 {
			runtimeYield()
		}
	}
	waitFor(phase)
	f.c.Kill(len(f.c.Replicas) - 1)
	if len(f.c.Replicas) == 1 { // SQLite debug mode: nothing serves until the restart
		f.c.Restart(0)
	}
	waitFor(2 * phase)
	if len(f.c.Replicas) > 1 {
		f.c.Restart(len(f.c.Replicas) - 1)
	}
	waitFor(3 * phase)
	stop.Store(true)
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	uids := map[string]string{}
	claim := func(uid, name string) {
		if other, dup := uids[uid]; dup {
			t.Errorf("UID %s handed out twice: %s and %s", uid, other, name)
		}
		uids[uid] = name
	}
	for name, uid := range acked {
		res, err := read(ctx, f.proxy, space, qref, name)
		if err != nil || res.Metadata.UID != uid {
			t.Errorf("acknowledged create %s (uid %s) after the kill: %v %+v", name, uid, err, res)
			continue
		}
		claim(uid, name)
	}
	for _, s := range unknown {
		raw, err := untilSettled(func() (*conformance.Raw, error) { return putApply(ctx, f.proxy, s.req, s.body, s.key, "", "") })
		if err != nil || raw.Status != 201 {
			t.Errorf("resending create %s cut by the kill under its key: %v %+v (want one 201: a replay or the first execution)", s.req.Metadata.Name, err, raw)
			continue
		}
		res, err := decodeResource(raw)
		if err != nil {
			t.Error(err)
			continue
		}
		claim(res.Metadata.UID, s.req.Metadata.Name)
	}
	t.Logf("%d acknowledged creates, %d cut by the kill and resolved by resending", len(acked), len(unknown))
}

// TestKilledReplicaLeavesPendingOperationsToTheOther: replica A accepts
// creates asynchronously (202, spec/host-api-v1alpha3.md §4) and is SIGKILLed
// before they are due, or as soon as the first of them has committed
// (while the replicas' workers settle the rest); polled through replica B,
// every operation completes with its resource, committed once.
func TestKilledReplicaLeavesPendingOperationsToTheOther(t *testing.T) {
	for _, c := range []struct {
		name    string
		pending int
		settled bool // kill once the first operation is done
	}{{"before-due", 8, false}, {"while-settling", 32, true}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 2, replicatest.Options{Probe: true})
			ctx := context.Background()
			a, b := f.replica(0), f.replica(1)
			qref := ref(t, a, "AtLeastOnceQueue")
			var ids, names []string
			for i := 0; i < c.pending; i++ {
				req := a.RequestIn(a.Space, qref, a.Name("orphan"), queueSpec(3600))
				body, err := prepared(ctx, a, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				raw, err := putApply(ctx, a, req, body, newKey(), "", "async")
				if err != nil || raw.Status != 202 {
					t.Fatalf("async create: %v %+v", err, raw)
				}
				var env wire.OperationEnvelope
				if err := json.Unmarshal(raw.Body, &env); err != nil {
					t.Fatal(err)
				}
				ids, names = append(ids, env.Operation.ID), append(names, req.Metadata.Name)
			}
			for c.settled {
				op, err := b.A1.Operation(ctx, ids[0])
				if err != nil {
					t.Fatal(err)
				}
				if op.Done {
					break
				}
				runtimeYield()
			}
			f.c.Kill(0)
			if len(f.c.Replicas) == 1 { // SQLite debug mode: the same process comes back
				f.c.Restart(0)
			}
			for i, id := range ids {
				op, err := b.A1.WaitOperation(ctx, id)
				if err != nil || !op.Done || op.Error != nil {
					t.Fatalf("operation %s accepted by the killed replica, polled through the other: %v %+v", id, err, op)
				}
				var result struct {
					Resource wire.Resource `json:"resource"`
				}
				if err := json.Unmarshal(op.Result, &result); err != nil {
					t.Fatal(err)
				}
				res, err := b.A1.Read(ctx, client.Address{Space: a.Space, Ref: qref, Name: names[i]})
				if err != nil || res.Metadata.UID != result.Resource.Metadata.UID || res.Metadata.Generation != "1" || res.Metadata.Revision != "1" {
					t.Fatalf("%s after its operation: %v %+v (operation committed uid %s)", names[i], err, res, result.Resource.Metadata.UID)
				}
			}
		})
	}
}

// runtimeYield is the pause of a wait on a counter other goroutines move.
func runtimeYield() { time.Sleep(10 * time.Millisecond) }

// TestOperationAcceptedByOneReplicaCancelledThroughTheOther: a 202
// accepted by replica A is cancelled through replica B before it commits
// (spec/host-api-v1alpha3.md §4): the operation ends operation_cancelled,
// nothing is created, and no replica commits it afterwards.
func TestOperationAcceptedByOneReplicaCancelledThroughTheOther(t *testing.T) {
	f := newFixture(t, 2, replicatest.Options{Probe: true, Args: []string{"--provisioning-delay=1500ms", "--sync-budget=200ms"}})
	ctx := context.Background()
	a, b := f.replica(0), f.replica(1)
	qref := ref(t, a, "AtLeastOnceQueue")
	req := a.RequestIn(a.Space, qref, a.Name("cancelled"), queueSpec(3600))
	body, err := prepared(ctx, a, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := putApply(ctx, a, req, body, newKey(), "", "")
	if err != nil || raw.Status != 202 {
		t.Fatalf("create with a provisioning delay above the sync budget: %v %+v", err, raw)
	}
	var env wire.OperationEnvelope
	if err := json.Unmarshal(raw.Body, &env); err != nil {
		t.Fatal(err)
	}
	op, err := b.A1.CancelOperation(ctx, env.Operation.ID)
	if err != nil || !op.Done || op.Error == nil || op.Error.Code != wire.OperationCancelled {
		t.Fatalf("cancel through replica B: %v %+v", err, op)
	}
	// Wait past the operation's due time on both replicas' workers: a
	// poll of the terminal document and a read must still say cancelled
	// and absent.
	time.Sleep(2 * time.Second)
	again, err := a.A1.Operation(ctx, env.Operation.ID)
	if err != nil || again.Error == nil || again.Error.Code != wire.OperationCancelled {
		t.Fatalf("the cancelled operation polled through replica A later: %v %+v", err, again)
	}
	if _, err := read(ctx, b, a.Space, qref, req.Metadata.Name); !client.IsNotFound(err) {
		t.Fatalf("a cancelled create left a resource: %v", err)
	}
}
