// Command terraform-provider-takoform is the takoform provider for
// Terraform and OpenTofu (plugin protocol 6).
package main

import (
	"flag"
	"log"
	"os"
	runtimedebug "runtime/debug"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/takoform/takoform/internal/cpuprofile"
	"github.com/takoform/takoform/internal/pluginlog"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/version"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers like delve")
	flag.Parse()
	pluginlog.Quiet() // before Serve reads the SDK log levels
	if os.Getenv("GOGC") == "" {
		// A short-lived process with a small live heap: collect at 5x
		// it, not 2x (PERFORMANCE.md, log entry "The provider's per-resource
		// work").
		runtimedebug.SetGCPercent(400)
	}
	stop, err := cpuprofile.FromEnv() // make bench-provider profiling
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	reg, err := provider.EdgeRegistry()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := provider.NewServer(version.String(), reg)()
	if err != nil {
		log.Fatal(err)
	}
	var opts []tf6server.ServeOpt
	if *debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	if err := tf6server.Serve("registry.opentofu.org/takoform/takoform", func() tfprotov6.ProviderServer { return srv }, opts...); err != nil {
		log.Fatal(err)
	}
}
