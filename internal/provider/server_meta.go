package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protoSchemas are our server's schemas as the protocol states them,
// built once per server (repo decisions 0066, 0070): the answers to
// GetMetadata, GetProviderSchema and GetResourceIdentitySchemas, built
// the first time one is asked for and answered from then on as built.
// They hold each resource type's and data source's schema
// (resourceSchemas), the metadata and the identities (converted from the
// framework's), and no provider block, which the framework server beside
// ours in the mux answers. The values the server decodes are of the same
// types (TestServerSchemasAreTheFrameworks).
type protoSchemas struct {
	once     sync.Once
	meta     *tfprotov6.GetMetadataResponse
	schema   *tfprotov6.GetProviderSchemaResponse
	identity *tfprotov6.GetResourceIdentitySchemasResponse
	err      error
}

// schemas builds the schemas on first use, the metadata and identities
// from a framework server over the registry built for this alone and
// never configured.
func (s *protoServer) schemas(ctx context.Context) *protoSchemas {
	p := &s.proto
	p.once.Do(func() {
		fw, err := providerserver.NewProtocol6WithError(New(s.provider.version, s.provider.registry)())()
		if p.err = err; err != nil {
			return
		}
		if p.meta, p.err = fw.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{}); p.err != nil {
			return
		}
		if p.schema, p.err = fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); p.err != nil {
			return
		}
		served := *p.schema
		served.Provider = nil // the framework server's in the mux
		served.ResourceSchemas, served.DataSourceSchemas = resourceSchemas(s.provider.registry)
		p.schema = &served
		p.identity, p.err = fw.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	})
	return p
}

// resourceSchemas are the schemas our server serves for reg's resource
// types and data sources, by type name, as protocol 6 states them: today
// those a framework server over reg answers (its own, built for this
// alone). The one place they come from. None when that server fails,
// which schemas, asking an identical one first, has already answered.
func resourceSchemas(reg *Registry) (resources, dataSources map[string]*tfprotov6.Schema) {
	fw, err := providerserver.NewProtocol6WithError(New("", reg)())()
	if err != nil {
		return nil, nil
	}
	ps, err := fw.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, nil
	}
	return ps.ResourceSchemas, ps.DataSourceSchemas
}

// GetMetadata answers the types and capabilities, as built once.
func (s *protoServer) GetMetadata(ctx context.Context, _ *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	p := s.schemas(ctx)
	return p.meta, p.err
}

// GetProviderSchema answers every resource and data-source schema, as
// built once.
func (s *protoServer) GetProviderSchema(ctx context.Context, _ *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	p := s.schemas(ctx)
	return p.schema, p.err
}

// GetResourceIdentitySchemas answers the identity schema of every
// resource type, as built once.
func (s *protoServer) GetResourceIdentitySchemas(ctx context.Context, _ *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	p := s.schemas(ctx)
	return p.identity, p.err
}
