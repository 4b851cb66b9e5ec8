// Command takoform is the Takoform command line: Form digests and
// verification, SpaceID checks, and (as they land) the host, surface and
// conformance tools.
package main

import (
	"fmt"
	"os"

	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/cpuprofile"
)

func main() {
	// Benchmark profiling (TAKOFORM_HOST_CPUPROFILE): the profile is
	// written when the command returns, e.g. `host serve` after SIGTERM.
	stop, err := cpuprofile.FromEnvVar(cpuprofile.HostEnvVar)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cli.Main(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
