package syncbuf

import (
	"fmt"
	"sync"
	"testing"
)

func TestConcurrentWritesAndJSONLines(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&b, "{\"msg\":\"w\",\"i\":%d}\n", i)
		}()
	}
	wg.Wait()
	fmt.Fprintln(&b, "not json")
	lines, bad := b.JSONLines()
	if len(lines) != 8 || len(bad) != 1 || bad[0] != "not json" {
		t.Fatalf("lines %d, bad %q; want 8 objects and the one plain line", len(lines), bad)
	}
}
