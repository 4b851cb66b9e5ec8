package replicatest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
)

// rssStored and rssBudgetMB are the memory budget of ARCHITECTURE.md §7: a `host serve`
// process on SQLite holds at most 60 MB resident at 10,000 stored
// resources.
const (
	rssStored   = 10000
	rssBudgetMB = 60
)

// BenchmarkServeRSS creates rssStored resources through one `host serve`
// process on a fresh SQLite file (prepare + PUT, c = 32), reads every one
// back, and reports the process's peak resident set (VmHWM, proc(5)) as
// it ships: GC percent, request log and metrics as `host serve` sets them.
// It does the same work whatever b.N is; make bench runs it once
// (-benchtime 1x).
func BenchmarkServeRSS(b *testing.B) {
	ctx := context.Background()
	c, h := startBenchHost(b, 1, filepath.Join(b.TempDir(), "host.db"))
	defer c.Stop()
	fanOut(b, rssStored, func(g int, i int64) error { return h.create(ctx, g, fmt.Sprintf("kv-%d", i)) })
	fanOut(b, rssStored, func(g int, i int64) error {
		_, err := h.clients[0].Read(ctx, client.Address{Space: "bench", Ref: h.req.Form.FormRef, Name: fmt.Sprintf("kv-%d", i)})
		return err
	})
	peak, err := procStatusKiB(c.Replicas[0].PID(), "VmHWM:")
	if err != nil {
		b.Fatal(err)
	}
	pid := c.Replicas[0].PID()
	anon, aerr := procStatusKiB(pid, "RssAnon:")
	file, ferr := procStatusKiB(pid, "RssFile:")
	if aerr != nil || ferr != nil {
		b.Fatal(aerr, ferr)
	}
	mb := float64(peak) / 1024
	b.ReportMetric(mb, "peak-rss-MB")
	verdict := "within"
	if mb > rssBudgetMB {
		verdict = "OVER"
	}
	fmt.Printf("\nhost serve on SQLite, %d stored (created and read back at c=%d): peak RSS %.1f MB, budget <= %d MB: %s; resident now %.1f MB anonymous (Go heap and stacks, SQLite's page caches) + %.1f MB file-backed (the binary's pages)\n",
		rssStored, benchClients, mb, rssBudgetMB, verdict, float64(anon)/1024, float64(file)/1024)
}

// procStatusKiB reads a size in KiB from /proc/PID/status (proc(5)):
// field is "VmHWM:" (the peak resident set), "RssAnon:" or "RssFile:".
func procStatusKiB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read the host's %s: %w", field, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s line in /proc/%d/status", field, pid)
}
