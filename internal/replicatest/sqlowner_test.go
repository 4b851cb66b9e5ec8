package replicatest_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/internal/replicatest"
)

// TestSQLOwnerKilledUnderWrites (spec/runtime-v1.md §10.5, repo decision
// 0063): two replicas on one PostgreSQL, each with its own workerd and
// ingress; four writers add ids to one SQLiteDatabase through both
// ingresses while the replica owning the database is SIGKILLed. Every id
// acknowledged (the worker answered "ok" after the gateway acknowledged
// the insert) is in the database read through the survivor, which took
// the database over once the dead owner's lease lapsed; nothing stored
// was never sent; and the killed replica, restarted, reads the same rows
// through the new owner.
func TestSQLOwnerKilledUnderWrites(t *testing.T) {
	bin := enginetest.Binary(t)
	c := cluster(t, 2, replicatest.Options{Args: []string{"--workerd", bin, "--ingress", "127.0.0.1:0"}})
	e := newEnv(t, c.URL, "")
	ctx := context.Background()
	dbName := createResource(t, e, "SQLiteDatabase", "db", map[string]any{})
	hostname := deployWorker(t, e, sqlWorker, map[string]any{"sqliteBindings": []any{map[string]any{"name": "DB", "resource": e.Rel("SQLiteDatabase", dbName)}}})
	ingress := []string{c.Replicas[0].Ingress(), c.Replicas[1].Ingress()}
	client := &http.Client{Timeout: 30 * time.Second}
	do := func(i int, method, path string) (int, string, error) {
		req, err := http.NewRequest(method, ingress[i]+path, nil)
		if err != nil {
			return 0, "", err
		}
		req.Host = hostname
		res, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
	for i := range ingress {
		var status int
		var body string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if status, body, _ = do(i, "POST", "/init"); status == http.StatusOK {
				break
			}
		}
		if status != http.StatusOK {
			t.Fatalf("replica %d: /init answered %d %q:\n%s", i, status, body, c.Logs())
		}
	}
	conn, err := pgx.Connect(ctx, c.Data())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var uid, holder string
	if err := conn.QueryRow(ctx, `SELECT uid FROM resources WHERE kind = 'SQLiteDatabase' AND name = $1`, dbName).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1`, store.SQLDatabaseLease(uid)).Scan(&holder); err != nil {
		t.Fatalf("the database's lease: %v", err)
	}
	// The holder is the owner's peer URL (its --listen address here) and
	// a token of its process (repo decision 0063).
	owns := func(r *replicatest.Replica, holder string) bool { return strings.HasPrefix(holder, r.URL+" ") }
	owner := slices.IndexFunc(c.Replicas, func(r *replicatest.Replica) bool { return owns(r, holder) })
	if owner < 0 {
		t.Fatalf("the lease is held by %q, which is neither replica's URL (%s, %s)", holder, c.Replicas[0].URL, c.Replicas[1].URL)
	}
	survivor := 1 - owner

	var (
		mu         sync.Mutex
		acked      = map[string]bool{}
		sent       = map[string]bool{}
		killed     atomic.Bool
		stop       atomic.Bool
		n          atomic.Int64
		firstAfter atomic.Int64 // ns from the kill to the first ack after it
	)
	var killedAt time.Time
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				id := fmt.Sprintf("w%d-%05d", w, n.Add(1))
				i := rand.IntN(2)
				if killed.Load() {
					i = survivor
				}
				mu.Lock()
				sent[id] = true
				mu.Unlock()
				status, body, err := do(i, "POST", "/add?id="+id)
				if err == nil && status == http.StatusOK && body == "ok" {
					mu.Lock()
					acked[id] = true
					if killed.Load() && firstAfter.Load() == 0 && i == survivor {
						firstAfter.Store(int64(time.Since(killedAt)))
					}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	mu.Lock()
	before := len(acked)
	killedAt = time.Now()
	mu.Unlock()
	c.Kill(owner)
	killed.Store(true)
	time.Sleep(store.SQLOwnerLease + 5*time.Second)
	stop.Store(true)
	wg.Wait()
	if before == 0 {
		t.Fatalf("no insert was acknowledged before the kill:\n%s", c.Logs())
	}
	if firstAfter.Load() == 0 {
		t.Fatalf("no insert was acknowledged through the survivor after the owner was killed:\n%s", c.Logs())
	}
	t.Logf("%d inserts acknowledged (%d before the kill, %d sent); the survivor acknowledged its first %v after the kill",
		len(acked), before, len(sent), time.Duration(firstAfter.Load()).Round(time.Millisecond))

	check := func(i int) {
		t.Helper()
		status, body, err := do(i, "GET", "/")
		if err != nil || status != http.StatusOK {
			t.Fatalf("read through replica %d: %d %q %v", i, status, body, err)
		}
		stored := map[string]bool{}
		for _, id := range strings.Split(body, ",") {
			if id != "" {
				stored[id] = true
			}
		}
		for id := range acked {
			if !stored[id] {
				t.Errorf("replica %d: acknowledged id %s is not in the database", i, id)
			}
		}
		for id := range stored {
			if !sent[id] {
				t.Errorf("replica %d: id %s is stored but was never sent", i, id)
			}
		}
	}
	check(survivor)
	if err := conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1`, store.SQLDatabaseLease(uid)).Scan(&holder); err != nil || !owns(c.Replicas[survivor], holder) {
		t.Errorf("after the kill the lease is held by %q (%v); want the survivor %s", holder, err, c.Replicas[survivor].URL)
	}
	c.Restart(owner)
	ingress[owner] = c.Replicas[owner].Ingress()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if status, _, _ := do(owner, "GET", "/"); status == http.StatusOK {
			break
		}
	}
	check(owner)
}
