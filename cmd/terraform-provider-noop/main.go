// Command terraform-provider-noop is a do-nothing provider (plugin protocol
// 6) at registry.opentofu.org/takoform/noop: the floor the takoform
// provider is benchmarked against (scripts/bench-provider.sh).
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/takoform/takoform/internal/noopprovider"
	"github.com/takoform/takoform/internal/pluginlog"
)

func main() {
	pluginlog.Quiet() // before Serve reads the SDK log levels
	if err := providerserver.Serve(context.Background(), noopprovider.New, providerserver.ServeOpts{Address: noopprovider.Address}); err != nil {
		log.Fatal(err)
	}
}
