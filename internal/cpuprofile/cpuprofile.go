// Package cpuprofile profiles a provider process for `make bench-provider`
// (scripts/bench-provider.sh; spec/decisions/0019-performance-budget.md)
// and a `takoform` process (HostEnvVar: the `host serve` replicas of the
// replica benchmarks, internal/replicatest). OpenTofu starts a provider
// several times per command and stops it gracefully, so each process
// writes a complete profile of its own.
package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// EnvVar names the file prefix for provider processes; unset or empty
// means no profiling.
const EnvVar = "TAKOFORM_PROVIDER_CPUPROFILE"

// HostEnvVar names the file prefix for `takoform` processes (FromEnvVar).
const HostEnvVar = "TAKOFORM_HOST_CPUPROFILE"

// FromEnv is FromEnvVar(EnvVar).
func FromEnv() (stop func(), err error) { return FromEnvVar(EnvVar) }

// FromEnvVar starts a CPU profile of this process at
// <prefix>.<program>.<pid> when the variable name is set, and returns what stops it
// and writes the allocation profile (all allocations since start) to the
// same name + ".heap". Errors: a profile file that can't be created or
// started; nothing is started then.
func FromEnvVar(name string) (stop func(), err error) {
	prefix := os.Getenv(name)
	if prefix == "" {
		return func() {}, nil
	}
	path := fmt.Sprintf("%s.%s.%d", prefix, filepath.Base(os.Args[0]), os.Getpid())
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		}
		h, err := os.Create(path + ".heap")
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return
		}
		defer h.Close()
		if err := pprof.Lookup("allocs").WriteTo(h, 0); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		}
	}, nil
}
