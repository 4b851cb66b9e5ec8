package cli

import (
	"os"
	"runtime/debug"
	"testing"
)

// `host serve` runs with ServeGCPercent unless the operator set GOGC.
func TestServeGCPercentRespectsGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "100")
	serveGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100 the GC percent is %d, want 100", got)
	}
	os.Unsetenv("GOGC") // t.Setenv restores it
	serveGCPercent()
	if got := debug.SetGCPercent(100); got != ServeGCPercent {
		t.Errorf("without GOGC the GC percent is %d, want %d", got, ServeGCPercent)
	}
}
