package provider

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// protoSchemas are our server's schemas as the protocol states them,
// built once per server (repo decisions 0066, 0069, 0070): the answers
// to GetMetadata, GetProviderSchema and GetResourceIdentitySchemas, built
// the first time one is asked for and answered from then on as built,
// from the registry alone: each resource type's and data source's schema
// from its own attribute tree (resourceSchemas), the identity's from its
// members (identitySchema), the metadata from the type names. No
// framework schema is read, and no provider block is stated: the
// framework server beside ours in the mux answers that. The answers are
// what terraform-plugin-framework v1.19 answers for the same provider
// (TestServerSchemasAreTheFrameworks).
type protoSchemas struct {
	once     sync.Once
	meta     *tfprotov6.GetMetadataResponse
	schema   *tfprotov6.GetProviderSchemaResponse
	identity *tfprotov6.GetResourceIdentitySchemasResponse
}

// schemas builds the schemas on first use.
func (s *protoServer) schemas() *protoSchemas {
	p := &s.proto
	p.once.Do(func() {
		reg := s.provider.registry
		caps := &tfprotov6.ServerCapabilities{GetProviderSchemaOptional: true, MoveResourceState: true, PlanDestroy: true}
		p.meta = &tfprotov6.GetMetadataResponse{ServerCapabilities: caps,
			Actions: []tfprotov6.ActionMetadata{}, EphemeralResources: []tfprotov6.EphemeralResourceMetadata{},
			Functions: []tfprotov6.FunctionMetadata{}, ListResources: []tfprotov6.ListResourceMetadata{},
			StateStores: []tfprotov6.StateStoreMetadata{},
			Resources:   make([]tfprotov6.ResourceMetadata, 0, len(reg.Types)),
			DataSources: make([]tfprotov6.DataSourceMetadata, 0, len(reg.Types))}
		for _, name := range slices.Sorted(maps.Keys(reg.Types)) {
			p.meta.Resources = append(p.meta.Resources, tfprotov6.ResourceMetadata{TypeName: name})
			p.meta.DataSources = append(p.meta.DataSources, tfprotov6.DataSourceMetadata{TypeName: name})
		}
		p.schema = &tfprotov6.GetProviderSchemaResponse{ServerCapabilities: caps,
			ActionSchemas: map[string]*tfprotov6.ActionSchema{}, EphemeralResourceSchemas: map[string]*tfprotov6.Schema{},
			Functions: map[string]*tfprotov6.Function{}, ListResourceSchemas: map[string]*tfprotov6.Schema{},
			StateStoreSchemas: map[string]*tfprotov6.Schema{}}
		p.schema.ResourceSchemas, p.schema.DataSourceSchemas = resourceSchemas(reg)
		p.identity = &tfprotov6.GetResourceIdentitySchemasResponse{IdentitySchemas: make(map[string]*tfprotov6.ResourceIdentitySchema, len(reg.Types))}
		id := identitySchema()
		for name := range reg.Types {
			p.identity.IdentitySchemas[name] = id
		}
	})
	return p
}

// identitySchema is the resource identity's schema as protocol 6 states
// it: one string attribute per identity member, sorted by name, name
// required on import and the others optional there (identityMembers; the
// framework adapter's IdentitySchema declares the same).
func identitySchema() *tfprotov6.ResourceIdentitySchema {
	attrs := make([]*tfprotov6.ResourceIdentitySchemaAttribute, 0, len(identityMembers))
	for _, m := range identityMembers {
		attrs = append(attrs, &tfprotov6.ResourceIdentitySchemaAttribute{Name: m.attr, Type: tftypes.String,
			RequiredForImport: m.attr == "name", OptionalForImport: m.attr != "name", Description: m.doc})
	}
	slices.SortFunc(attrs, func(a, b *tfprotov6.ResourceIdentitySchemaAttribute) int { return strings.Compare(a.Name, b.Name) })
	return &tfprotov6.ResourceIdentitySchema{Version: identityVersion, IdentityAttributes: attrs}
}

// GetMetadata answers the types and capabilities, as built once.
func (s *protoServer) GetMetadata(_ context.Context, _ *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return s.schemas().meta, nil
}

// GetProviderSchema answers every resource and data-source schema, as
// built once.
func (s *protoServer) GetProviderSchema(_ context.Context, _ *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return s.schemas().schema, nil
}

// GetResourceIdentitySchemas answers the identity schema of every
// resource type, as built once.
func (s *protoServer) GetResourceIdentitySchemas(_ context.Context, _ *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return s.schemas().identity, nil
}
