// Command terraform-provider-takoform is the takoform provider for
// Terraform and OpenTofu (plugin protocol 6).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/takoform/takoform/internal/cpuprofile"
	"github.com/takoform/takoform/internal/pluginlog"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/version"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers like delve")
	flag.Parse()
	pluginlog.Quiet()                 // before Serve reads the SDK log levels
	stop, err := cpuprofile.FromEnv() // make bench-provider profiling
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
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
