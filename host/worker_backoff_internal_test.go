package host

import (
	"testing"
	"time"
)

// TestWorkerBackoff: the wait after n consecutive failed polls doubles from
// the poll interval and stops at the 5 s cap; 0 failures is the poll.
func TestWorkerBackoff(t *testing.T) {
	ms := time.Millisecond
	for n, want := range []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 5 * time.Second, 5 * time.Second} {
		if got := workerBackoff(n); got != want {
			t.Errorf("workerBackoff(%d) = %s, want %s", n, got, want)
		}
	}
	if got := workerBackoff(1000); got != 5*time.Second {
		t.Errorf("workerBackoff(1000) = %s, want the 5s cap", got)
	}
}
