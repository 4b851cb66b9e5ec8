// Command terraform-provider-takoform is the takoform provider for
// Terraform and OpenTofu (plugin protocol 6).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/takoform/takoform/internal/pluginlog"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/version"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers like delve")
	flag.Parse()
	pluginlog.Quiet() // before Serve reads the SDK log levels
	// TAKOFORM_PROVIDER_CPUPROFILE=<prefix> writes a CPU profile of this
	// provider process to <prefix>.<pid>, and <prefix>.<pid>.heap its
	// allocations at exit (OpenTofu starts the provider several times), for
	// `make bench-provider` profiling (issue 14). OpenTofu stops the
	// provider gracefully, so Serve returns and the profile is complete.
	if path := os.Getenv("TAKOFORM_PROVIDER_CPUPROFILE"); path != "" {
		defer profile(fmt.Sprintf("%s.%d", path, os.Getpid()))()
	}
	reg, err := provider.EdgeRegistry()
	if err != nil {
		log.Fatal(err)
	}
	err = providerserver.Serve(context.Background(), provider.New(version.String(), reg), providerserver.ServeOpts{
		Address: "registry.opentofu.org/takoform/takoform",
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// profile starts a CPU profile at path and returns what ends it and
// writes path.heap (all allocations since start).
func profile(path string) func() {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		if h, err := os.Create(path + ".heap"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(h, 0)
			h.Close()
		}
	}
}
