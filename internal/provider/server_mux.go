package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-mux/tf6muxserver"
)

// NewServer is the provider's protocol-6 server over reg (repo decisions
// 0066 and 0070): terraform-plugin-mux over two servers. The first is
// the plugin framework's, serving the provider block only (its schema,
// ValidateProviderConfig, ConfigureProvider, StopProvider; no resource
// type, no data source: providerBlock). The second is ours, on
// terraform-plugin-go, serving every resource type and data source of
// the registry, every RPC: validate, plan, apply (create, update,
// delete), read, import, state upgrade from every prior schema version,
// identity upgrade, move, config generation, data-source validate and
// read (server.go, server_apply.go, server_import.go, server_upgrade.go,
// server_move.go, server_data.go, planrules.go, validate.go), calling the
// resource's and data source's operations on values (framework.go names
// them), with the schemas answered as built once (server_meta.go). Both
// servers are over one Provider: the framework's Configure stores the
// configured Data in it and our server loads it at each RPC
// (protoServer.provider). Errors: a registry type whose
// schema has no plan rules (planRulesOf), which this server does not
// reproduce, or a framework server that cannot be built.
func NewServer(version string, reg *Registry) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		mux, _, err := newServers(version, reg)
		return mux, err
	}
}

// newServers is NewServer's muxed server and our server in it.
func newServers(version string, reg *Registry) (tfprotov6.ProviderServer, *protoServer, error) {
	p := &Provider{version: version, registry: reg}
	block, err := providerserver.NewProtocol6WithError(providerBlock{p})()
	if err != nil {
		return nil, nil, err
	}
	s := &protoServer{provider: p, types: map[string]*protoType{}, data: map[string]*dataType{}}
	ctx := context.Background()
	for name, t := range reg.Types {
		rules, err := planRulesOf(t.Attrs)
		if err != nil {
			return nil, nil, fmt.Errorf("resource type %s: %w", name, err)
		}
		s.types[name] = &protoType{spec: t, rules: rules}
		dt, err := dataTypeOf(t)
		if err != nil {
			return nil, nil, fmt.Errorf("data source %s: %w", name, err)
		}
		s.data[name] = dt
	}
	mux, err := tf6muxserver.NewMuxServer(ctx, func() tfprotov6.ProviderServer { return block }, func() tfprotov6.ProviderServer { return s })
	if err != nil {
		return nil, nil, err
	}
	return mux.ProviderServer(), s, nil
}

// providerBlock is the provider as the framework serves it in NewServer:
// the provider block (Metadata, Schema, Configure) and no resource type
// or data source, which our server serves.
type providerBlock struct{ *Provider }

// Resources registers none.
func (providerBlock) Resources(context.Context) []func() resource.Resource { return nil }

// DataSources registers none.
func (providerBlock) DataSources(context.Context) []func() datasource.DataSource { return nil }

// ValidateProviderConfig answers nothing: the provider block is the
// framework server's, which mux asks too and whose answer it returns.
func (s *protoServer) ValidateProviderConfig(context.Context, *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{}, nil
}

// ConfigureProvider answers nothing: the framework server's Configure,
// which mux calls first, stores the Data this server loads
// (protoServer.provider).
func (s *protoServer) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

// StopProvider answers no error and stops nothing, as before mux (repo
// decision 0066): this server's RPCs end with their request's context;
// the framework server, which mux asks too, cancels only its own.
func (s *protoServer) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return &tfprotov6.StopProviderResponse{}, nil
}
