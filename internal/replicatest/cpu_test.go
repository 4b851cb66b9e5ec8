package replicatest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// clockTick is Linux's USER_HZ, the unit of /proc/PID/stat's CPU times
// (proc(5)); 100 on every architecture Go supports on Linux.
const clockTick = 10 * time.Millisecond

// cpuMeter samples the CPU time (user + system) of the three parties of a
// benchmark: the host processes, the PostgreSQL server (postmaster and
// every backend), and this test process (the clients). It reads Linux's
// /proc (proc(5)); elsewhere every figure is zero. Other work on the
// machine does not count in any figure, so per-operation CPU is steadier
// on a shared box than throughput (contention still inflates it:
// PERFORMANCE.md, log entry "Where a create's and a read's CPU goes on
// PostgreSQL").
type cpuMeter struct {
	hosts      []int // host process ids
	postmaster int   // 0: no PostgreSQL in this measurement
	// engines counts the hosts' child processes (their workerd shards,
	// live and reaped) as a fourth party.
	engines bool
}

// cpuSample is CPU time spent so far; engine only when cpuMeter.engines.
type cpuSample struct{ host, pg, client, engine time.Duration }

func (m *cpuMeter) sample() cpuSample {
	var s cpuSample
	if m == nil {
		return s
	}
	host := map[int]bool{}
	for _, pid := range m.hosts {
		st, _ := procStat(pid)
		s.host += st.self
		host[pid] = true
		if m.engines {
			s.engine += st.children // shards of earlier generations, reaped
		}
	}
	if m.postmaster != 0 || m.engines {
		if m.postmaster != 0 {
			st, _ := procStat(m.postmaster)
			s.pg = st.self + st.children // children: backends already reaped
		}
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			pid, err := strconv.Atoi(filepath.Base(d))
			if err != nil {
				continue
			}
			st, ok := procStat(pid)
			switch {
			case !ok:
			case m.postmaster != 0 && st.ppid == m.postmaster:
				s.pg += st.self
			case m.engines && host[st.ppid]:
				s.engine += st.self
			}
		}
	}
	self, _ := procStat(os.Getpid())
	s.client = self.self
	return s
}

type procTimes struct {
	ppid           int
	self, children time.Duration
}

// procStat reads /proc/PID/stat (proc(5)): ppid, utime + stime, and
// cutime + cstime of waited-for children.
func procStat(pid int) (procTimes, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procTimes{}, false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return procTimes{}, false
	}
	f := strings.Fields(string(data[i+1:])) // f[0] is field 3 (state)
	if len(f) < 15 {
		return procTimes{}, false
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
	return procTimes{
		ppid:     int(n(1)),
		self:     time.Duration(n(11)+n(12)) * clockTick,
		children: time.Duration(n(13)+n(14)) * clockTick,
	}, true
}

// postmasterPID is the process id of the PostgreSQL server at url: the
// parent of a backend this asks for its own pid. 0 when it is not on
// this machine's /proc.
func postmasterPID(b *testing.B, url string) int {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	st, ok := procStat(backend)
	if !ok {
		return 0
	}
	return st.ppid
}

// report adds per-operation CPU since start to b (µs/op of each party)
// and to the summary under label.
func (m *cpuMeter) report(b *testing.B, label string, start cpuSample, n int) {
	if m == nil || n == 0 {
		return
	}
	end := m.sample()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	c := [3]float64{per(end.host - start.host), per(end.pg - start.pg), per(end.client - start.client)}
	b.ReportMetric(c[0], "host-cpu-µs/op")
	b.ReportMetric(c[1], "pg-cpu-µs/op")
	b.ReportMetric(c[2], "client-cpu-µs/op")
	benchResults.Lock()
	benchResults.cpu[label] = c
	benchResults.Unlock()
}

// pgMeter is a cpuMeter for hosts on the PostgreSQL server of pgtest.
func pgMeter(b *testing.B, hosts []int) *cpuMeter {
	return &cpuMeter{hosts: hosts, postmaster: postmasterPID(b, pgtest.ServerURL(b))}
}
