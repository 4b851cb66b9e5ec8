// Command takoform is the Takoform command line: Form digests and
// verification, SpaceID checks, and (as they land) the host, surface and
// conformance tools.
package main

import (
	"os"

	"github.com/takoform/takoform/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
