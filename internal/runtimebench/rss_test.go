package runtimebench_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/enginetest"
)

// rss is a process's resident set from /proc/PID/status, in KiB.
type rss struct{ total, anon, file int64 }

func readRSS(b *testing.B, pid int) rss {
	return rss{procKiB(b, pid, "VmRSS:"), procKiB(b, pid, "RssAnon:"), procKiB(b, pid, "RssFile:")}
}

func mib(kib int64) string { return fmt.Sprintf("%.2f MiB", float64(kib)/1024) }

// idle is how long a process sits untouched before its memory is read.
const idle = 2 * time.Second

// BenchmarkShardRSS reads the resident memory of a tenant's shard (its
// workerd process, idle, with one hello-world worker that answered once),
// then deploys BENCH_RUNTIME_WORKERS more workers into the same tenant
// (default 20; each answers once through the ingress) and reads the
// serving generation's process again: the growth per worker. Beside them
// the floor of the same run, a bare workerd (bare) with one worker and
// with as many as the shard then serves, each worker requested once.
// From /proc/PID/status (proc(5)): VmRSS, split into anonymous and
// file-backed pages.
func BenchmarkShardRSS(b *testing.B) {
	n := envInt(b, "BENCH_RUNTIME_WORKERS", 20)
	r := startRig(b)
	header(fmt.Sprintf("resident memory of an idle shard and per further worker (%d more), beside a bare workerd", n))
	b.ResetTimer()
	w := r.deploy(helloSource, nil)
	r.waitAnswer(w.hostname, "/", helloBody, 20*time.Millisecond)
	shard1 := r.idleShardRSS()
	var ws []*worker
	var bodies []string
	for i := range n {
		src, body := helloN("shard-" + fmt.Sprint(i))
		ws, bodies = append(ws, r.deploy(src, nil)), append(bodies, body)
	}
	for i, x := range ws {
		r.waitAnswer(x.hostname, "/", bodies[i], 20*time.Millisecond)
	}
	shardN := r.idleShardRSS()

	bin := enginetest.Binary(b)
	bareRSS := func(workers int) rss {
		x := startBare(b, bin, workers)
		x.waitAnswer(b, 0, 20*time.Millisecond)
		for i := 1; i < workers; i++ {
			if err := x.answerOnce(i); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(idle)
		m := readRSS(b, x.proc.Pid())
		x.proc.Stop(5 * time.Second)
		return m
	}
	bare1, bareN := bareRSS(1), bareRSS(n+1)
	b.StopTimer()
	per := func(a, z rss) rss {
		return rss{(z.total - a.total) / int64(n), (z.anon - a.anon) / int64(n), (z.file - a.file) / int64(n)}
	}
	row := func(name string, m rss) {
		fmt.Printf("   %-40s %11s %11s %11s\n", name, mib(m.total), mib(m.anon), mib(m.file))
	}
	fmt.Printf("   %-40s %11s %11s %11s\n", "process", "VmRSS", "anonymous", "file")
	row("shard, 1 worker", shard1)
	row("bare workerd, 1 worker (floor)", bare1)
	row(fmt.Sprintf("shard, %d workers", n+1), shardN)
	row(fmt.Sprintf("bare workerd, %d workers (floor)", n+1), bareN)
	row("per further worker, shard", per(shard1, shardN))
	row("per further worker, bare (floor)", per(bare1, bareN))
	fmt.Printf("   shard / bare: %.2f× idle, %.2f× per further worker\n",
		float64(shard1.total)/float64(bare1.total), float64(shardN.total-shard1.total)/float64(bareN.total-bare1.total))
	fmt.Printf("   load average at end: %s\n", loadavg())
	b.ReportMetric(float64(shard1.total)/1024, "shard-MiB")
	b.ReportMetric(float64(shardN.total-shard1.total)/1024/float64(n), "MiB/worker")
}

// idleShardRSS waits until tenant-a's serving generation is the only
// workerd process left (older generations drained and exited), lets it
// sit idle, and reads its memory.
func (r *rig) idleShardRSS() rss {
	r.b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pid := r.h.Runtime.Processes()["tenant-a"]
		if pid != 0 && len(children(r.b)) == 1 {
			time.Sleep(idle)
			if r.h.Runtime.Processes()["tenant-a"] == pid && len(children(r.b)) == 1 {
				return readRSS(r.b, pid)
			}
		}
		if time.Now().After(deadline) {
			r.b.Fatalf("tenant-a's shard never settled to one process: %v", children(r.b))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
