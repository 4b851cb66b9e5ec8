// Package syncbuf is a text buffer that several goroutines (a host's
// loggers, a child process's output streams) write while a test polls
// what was written so far. Tests only: it holds everything in memory.
package syncbuf

import (
	"encoding/json"
	"strings"
	"sync"
)

// Buffer is safe for concurrent Write and String; the zero value is ready.
type Buffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// JSONLines decodes each non-empty line written so far as a JSON object
// (a slog JSON log); bad lists the lines that are not.
func (b *Buffer) JSONLines() (lines []map[string]any, bad []string) {
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			bad = append(bad, l)
			continue
		}
		lines = append(lines, m)
	}
	return lines, bad
}
