package runtimeabi_test

import (
	"syscall"
	"testing"
)

// kill sends SIGKILL to a shard process the test host started.
func kill(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill shard %d: %v", pid, err)
	}
}
