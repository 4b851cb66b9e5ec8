package host_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store/sqlite"
)

// TestWorkerBacksOffWhileTheStoreFails: with its store gone (closed), the
// operation worker logs "list due operations" once per backoff step — at
// most 5 lines in 1.5 s (0.1 + 0.2 + 0.4 + 0.8 s), not the 15 a 100 ms
// poll without backoff writes — each naming the failure count and wait.
// A slower machine writes fewer lines, never more.
func TestWorkerBacksOffWhileTheStoreFails(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "host.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	srv, err := host.New(context.Background(), host.Config{Store: st, Catalog: cat, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	time.Sleep(1500 * time.Millisecond)
	srv.Close()
	out := logs.String()
	n := strings.Count(out, `msg="list due operations"`)
	if n < 1 || n > 5 {
		t.Fatalf("the worker logged %d list failures in 1.5 s, want 1 to 5 (backoff):\n%s", n, out)
	}
	if !strings.Contains(out, "failures=1 retry_in=200ms") {
		t.Errorf("the first failure does not name its count and wait:\n%s", out)
	}
}
