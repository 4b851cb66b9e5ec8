package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protoSchemas are the provider's schemas as the protocol states them,
// built once per server (repo decisions 0066, 0069): the answers to
// GetMetadata, GetProviderSchema and GetResourceIdentitySchemas, built the
// first time one is asked for and answered from then on as built. Each
// resource type's and data source's schema is converted from the type's
// own attribute tree (resourceSchemas); the provider block's, the
// metadata and the identity's are converted from the framework's. The
// values the server decodes are of the same types
// (TestServerSchemasAreTheFrameworks).
type protoSchemas struct {
	once     sync.Once
	meta     *tfprotov6.GetMetadataResponse
	schema   *tfprotov6.GetProviderSchemaResponse
	identity *tfprotov6.GetResourceIdentitySchemasResponse
	err      error
}

// schemas builds the schemas on first use.
func (s *protoServer) schemas(ctx context.Context) *protoSchemas {
	p := &s.proto
	p.once.Do(func() {
		if p.meta, p.err = s.ProviderServer.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{}); p.err != nil {
			return
		}
		if p.schema, p.err = s.ProviderServer.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); p.err != nil {
			return
		}
		served := *p.schema
		served.ResourceSchemas, served.DataSourceSchemas = resourceSchemas(s.provider.registry)
		p.schema = &served
		p.identity, p.err = s.ProviderServer.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	})
	return p
}

// GetMetadata answers the types and capabilities, as built once.
func (s *protoServer) GetMetadata(ctx context.Context, _ *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	p := s.schemas(ctx)
	return p.meta, p.err
}

// GetProviderSchema answers every schema, as built once.
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
