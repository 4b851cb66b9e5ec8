// Command terraform-provider-noop is a do-nothing provider (plugin protocol
// 6) at registry.opentofu.org/takoform/noop: the floor the takoform
// provider is benchmarked against (scripts/bench-provider.sh).
package main

import (
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/takoform/takoform/internal/cpuprofile"
	"github.com/takoform/takoform/internal/noopprovider"
	"github.com/takoform/takoform/internal/pluginlog"
)

func main() {
	pluginlog.Quiet()                 // before Serve reads the SDK log levels
	stop, err := cpuprofile.FromEnv() // make bench-provider profiling
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	srv, err := noopprovider.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	if err := tf6server.Serve(noopprovider.Address, func() tfprotov6.ProviderServer { return srv }); err != nil {
		log.Fatal(err)
	}
}
