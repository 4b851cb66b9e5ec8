package replicatest_test

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/events"
)

// TestEventsLeaseHolderKilledUnderCronAndQueueLoad (issue item "shown under
// faults"; spec/runtime-v1.md §2.5, §2.6, §10.5; repo decisions 0060,
// 0062, 0064): two replicas, each with its own workerd and ingress, run a
// worker with a cron trigger firing every minute and a queue consumer
// with a dead-letter queue. Senders keep sending through both ingresses
// while the events lease's holder is SIGKILLed at second 50 of a minute —
// so the next minute boundary falls before its lease's deadline, inside
// the takeover gap — and restarted once the other replica holds the
// lease. Afterwards, by the store's firing records and the handlers' KV
// entries: every matched minute from the first fired to the last passed
// fired exactly once (state ok), the one in the gap by the new holder;
// every acknowledged send was delivered (a KV entry) or, for the bodies
// the handler retries, dead-lettered exactly once; the queue is empty.
// Real minutes: `host serve` has no test clock.
func TestEventsLeaseHolderKilledUnderCronAndQueueLoad(t *testing.T) {
	start := time.Now()
	c := eventsCluster(t, nil)
	a := deployEvents(t, c, eventsWorker)
	deployed := time.Now() // both replicas serve the endpoint created after the trigger: the trigger is live on both
	l0, holder := a.waitLease(t, -1, 30*time.Second)
	other := 1 - holder
	t.Logf("replica %d holds the events lease (epoch %d); the worker serves on both %v after the start", holder, l0.Epoch, time.Since(start).Round(time.Second))

	// Senders: each send goes to the next ingress; one whose replica is
	// down fails (not acknowledged) and the sender moves on.
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // body -> message id
		failed  atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
		perRepl [2]atomic.Int64
	)
	for s := 0; s < 4; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				body := fmt.Sprintf("m-%d-%d", s, n)
				if n%10 == 9 {
					body = "poison-" + body
				}
				i := (s + n) % 2
				status, id, err := a.get(i, "/send?body="+body)
				if err != nil || status != http.StatusOK || id == "" {
					failed.Add(1)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked[body] = id
				mu.Unlock()
				perRepl[i].Add(1)
				time.Sleep(20 * time.Millisecond)
			}
		}(s)
	}
	defer func() { stop.Store(true); wg.Wait() }()

	untilSecond(50)
	killed := time.Now()
	c.Kill(holder)
	gap := killed.UTC().Truncate(time.Minute).Add(time.Minute) // the boundary after the kill
	dead, _ := a.lease(t)
	t.Logf("replica %d SIGKILLed at %s; its lease (epoch %d) runs to %s, the next boundary is %s",
		holder, killed.Format("15:04:05.000"), dead.Epoch, dead.Expires.Format("15:04:05.000"), gap.Format("15:04:05"))
	if !dead.Expires.After(gap) {
		t.Fatalf("the killed holder's lease ran to %s, before the boundary %s: the kill did not put a boundary in the takeover gap", dead.Expires, gap)
	}
	l1, now := a.waitLease(t, holder, 40*time.Second)
	if now != other || l1.Epoch <= dead.Epoch {
		t.Fatalf("after the kill the lease is %+v (replica %d), want replica %d's with an epoch after %d", l1, now, other, dead.Epoch)
	}
	t.Logf("replica %d took the lease over (epoch %d) %v after the kill", other, l1.Epoch, time.Since(killed).Round(time.Millisecond))
	c.Restart(holder)
	a.waitServing(t, holder, 60*time.Second)
	t.Logf("replica %d restarted and serves the worker %v after the kill", holder, time.Since(killed).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // sends through both again
	stop.Store(true)
	wg.Wait()

	// Settle: the queue drains and the gap's minute is fired.
	var left int
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		left = len(a.bodies(t, a.queue))
		if f, ok := a.firings(t)[gap]; left == 0 && ok && f.state != "recorded" && f.state != "dispatching" {
			break
		}
	}
	end := time.Now()

	// Cron: every matched minute from the first boundary after the
	// deploy through the last one that passed a second ago fired once,
	// settled ok, its handler running within it.
	firings, calls := a.firings(t), a.invocations(t)
	last := end.UTC().Add(-time.Second).Truncate(time.Minute)
	for m := deployed.UTC().Truncate(time.Minute).Add(time.Minute); !m.After(last); m = m.Add(time.Minute) {
		f, ok := firings[m]
		switch {
		case !ok:
			t.Errorf("minute %s: no firing recorded (missed while a replica lived)", m.Format("15:04"))
		case f.state != "ok":
			t.Errorf("minute %s: firing %s (epoch %d), want ok", m.Format("15:04"), f.state, f.epoch)
		case len(calls[m]) != 1:
			t.Errorf("minute %s: the scheduled handler ran %d times, want once: %v", m.Format("15:04"), len(calls[m]), calls[m])
		case calls[m][0].Before(m) || !calls[m][0].Before(m.Add(time.Minute)):
			t.Errorf("minute %s: the scheduled handler ran at %s, outside its minute", m.Format("15:04"), calls[m][0].Format("15:04:05.000"))
		default:
			t.Logf("minute %s: fired once at %s, epoch %d", m.Format("15:04"), calls[m][0].Format("15:04:05.000"), f.epoch)
		}
	}
	for m, f := range firings {
		if len(calls[m]) > 1 {
			t.Errorf("minute %s (%s, epoch %d): the scheduled handler ran %d times: %v", m.Format("15:04"), f.state, f.epoch, len(calls[m]), calls[m])
		}
	}
	for m, at := range calls {
		if _, ok := firings[m]; !ok {
			t.Errorf("the scheduled handler ran for minute %s (%v) with no firing recorded", m.Format("15:04"), at)
		}
	}
	if f, ok := firings[gap]; !ok || f.epoch != l1.Epoch {
		t.Errorf("the minute %s whose boundary fell in the takeover gap: recorded %v as %+v, want fired by the new holder (epoch %d)", gap.Format("15:04"), ok, f, l1.Epoch)
	}

	// Queues: every acknowledged send delivered or dead-lettered.
	delivered := map[string]int{}
	for key := range a.kvPrefix(t, "msg/") {
		delivered[strings.SplitN(key, "/", 3)[1]]++
	}
	letters := a.bodies(t, a.dlq)
	var lost, dupDead, twice []string
	mu.Lock()
	for body := range acked {
		switch {
		case strings.HasPrefix(body, "poison"):
			if letters[body] != 1 {
				dupDead = append(dupDead, fmt.Sprintf("%s×%d", body, letters[body]))
			}
		case delivered[body] == 0:
			lost = append(lost, body)
		case delivered[body] > 1:
			twice = append(twice, body)
		}
	}
	n := len(acked)
	mu.Unlock()
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged sends never delivered: %v", len(lost), n, head(lost))
	}
	if len(dupDead) > 0 {
		t.Errorf("%d acknowledged poison sends not dead-lettered exactly once: %v", len(dupDead), head(dupDead))
	}
	if left != 0 {
		t.Errorf("%d messages still on the queue 45 s after the senders stopped", left)
	}
	released := regexp.MustCompile(`claims of batches of an earlier lease epoch released.* messages=(\d+)`).FindStringSubmatch(c.Replicas[other].LogText())
	if released == nil {
		released = []string{"", "0"}
	}
	t.Logf("%d sends acknowledged (%d through replica 0, %d through 1), %d refused or cut; %s claimed by the killed holder released by the new one; %d delivered more than once (at least once); %d dead letters; test ran %v",
		n, perRepl[0].Load(), perRepl[1].Load(), failed.Load(), released[1], len(twice), len(letters), time.Since(start).Round(time.Second))
	if t.Failed() {
		t.Log(a.eventLogs())
	}
}

// TestEventsKilledBetweenRecordAndDispatch (spec/runtime-v1.md §2.5 rule
// 4; repo decisions 0060, 0062, 0064): replica 0 runs with the test-only
// fault hook events.KillAfterRecordEnv and holds the events lease; at
// the first boundary after the deploy it records the minute's firing and
// SIGKILLs itself before dispatching it. Replica 1 takes the lease over
// within the minute, finds the minute recorded and never dispatched, and
// fires it: the store's record settles ok under the new epoch, and the
// scheduled handler ran exactly once, within its minute.
func TestEventsKilledBetweenRecordAndDispatch(t *testing.T) {
	start := time.Now()
	c := eventsCluster(t, map[int][]string{0: {events.KillAfterRecordEnv + "=1"}})
	a := deployEvents(t, c, eventsWorker)
	l0, holder := a.waitLease(t, -1, 30*time.Second)
	if holder != 0 {
		// Replica 1 acquired first: an orderly stop releases its lease to
		// replica 0 (repo decision 0062 rule 3).
		c.Terminate(1)
		l0, holder = a.waitLease(t, 1, 30*time.Second)
		c.Restart(1)
		a.waitServing(t, 1, 60*time.Second)
	}
	t.Logf("replica 0 (with the fault hook) holds the events lease, epoch %d, %v after the start", l0.Epoch, time.Since(start).Round(time.Second))
	if n := len(a.firings(t)); n != 0 {
		t.Fatalf("%d firings recorded before the first boundary; the hook should have killed replica 0 at the first", n)
	}

	// Replica 0 dies at the next boundary, its firing recorded; the hook
	// says which minute on its way out.
	said := regexp.MustCompile(regexp.QuoteMeta(events.KillAfterRecordEnv) + `=1: SIGKILL after recording trigger \S+ firing of (\S+), before its dispatch`)
	var died, minute time.Time
	for deadline := time.Now().Add(75 * time.Second); died.IsZero(); time.Sleep(50 * time.Millisecond) {
		if m := said.FindStringSubmatch(c.Replicas[0].LogText()); m != nil {
			died = time.Now()
			var err error
			if minute, err = time.Parse(time.RFC3339, m[1]); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica 0 did not kill itself at a firing within 75 s:\n%s", c.Logs())
		}
	}
	c.Kill(0) // reaps the process and stops the proxy routing to it
	// Nobody can take the lease over before the dead holder's deadline,
	// 10 s at least after its last renewal: the minute is still recorded.
	if f, ok := a.firings(t)[minute]; !ok || f.state != "recorded" || f.epoch != l0.Epoch {
		t.Errorf("the firing of %s right after replica 0 died: %v %+v, want recorded under epoch %d (the hook kills after the record, before the dispatch)", minute.Format("15:04"), ok, f, l0.Epoch)
	}
	l1, _ := a.waitLease(t, 0, 40*time.Second)
	t.Logf("replica 0 died after recording minute %s at %s; replica 1 took the lease over (epoch %d) %v later",
		minute.Format("15:04"), died.Format("15:04:05.000"), l1.Epoch, time.Since(died).Round(time.Millisecond))

	var f firing
	for deadline := minute.Add(time.Minute + 5*time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if f = a.firings(t)[minute]; f.state == "ok" {
			break
		}
	}
	calls := a.invocations(t)[minute]
	if f.state != "ok" || f.epoch != l1.Epoch {
		t.Errorf("the minute %s recorded by the killed replica is %+v, want ok under replica 1's epoch %d (retried while the minute lasts)", minute.Format("15:04"), f, l1.Epoch)
	}
	if len(calls) != 1 {
		t.Errorf("the scheduled handler ran %d times for %s, want once: %v", len(calls), minute.Format("15:04"), calls)
	} else if calls[0].Before(minute) || !calls[0].Before(minute.Add(time.Minute)) {
		t.Errorf("the scheduled handler ran for %s at %s, outside its minute", minute.Format("15:04"), calls[0].Format("15:04:05.000"))
	} else {
		t.Logf("minute %s fired once, at %s by replica 1; test ran %v", minute.Format("15:04"), calls[0].Format("15:04:05.000"), time.Since(start).Round(time.Second))
	}
	if t.Failed() {
		t.Log(a.eventLogs())
	}
}

func head(s []string) []string {
	sort.Strings(s)
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
