package noopprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// rawIdentityAttrs are the members of noop_raw's resource identity: those
// of takoform_edge_kv_namespace's (internal/provider/identity.go, which
// TestRawHasTheKVNamespaceIdentity compares), one string each, name
// required on import. OpenTofu stores, compares and plans an identity
// with every resource that has one, so the floor carries it too.
var rawIdentityAttrs = []string{"space", "api_version", "kind", "definition_version", "schema_digest", "name"}

var rawIdentityType = func() tftypes.Object {
	attrs := map[string]tftypes.Type{}
	for _, n := range rawIdentityAttrs {
		attrs[n] = tftypes.String
	}
	return tftypes.Object{AttributeTypes: attrs}
}()

func rawIdentitySchema() *tfprotov6.ResourceIdentitySchema {
	s := &tfprotov6.ResourceIdentitySchema{}
	for _, n := range rawIdentityAttrs {
		s.IdentityAttributes = append(s.IdentityAttributes, &tfprotov6.ResourceIdentitySchemaAttribute{
			Name: n, Type: tftypes.String, RequiredForImport: n == "name", OptionalForImport: n != "name"})
	}
	return s
}

func (r *rawServer) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	resp, err := r.ProviderServer.GetResourceIdentitySchemas(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.IdentitySchemas == nil {
		resp.IdentitySchemas = map[string]*tfprotov6.ResourceIdentitySchema{}
	}
	resp.IdentitySchemas[RawType] = rawIdentitySchema()
	return resp, nil
}

func (r *rawServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.UpgradeResourceIdentity(ctx, req)
	}
	v, err := req.RawIdentity.Unmarshal(rawIdentityType)
	if err != nil {
		return &tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: fail(err)}, nil
	}
	id, err := identityData(v)
	if err != nil {
		return &tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: fail(err)}, nil
	}
	return &tfprotov6.UpgradeResourceIdentityResponse{UpgradedIdentity: id}, nil
}

// appliedIdentity is the identity of a created noop_raw: its name, and a
// constant for every other member.
func appliedIdentity(state tftypes.Value) (*tfprotov6.ResourceIdentityData, error) {
	var attrs map[string]tftypes.Value
	if err := state.As(&attrs); err != nil {
		return nil, err
	}
	members := map[string]tftypes.Value{}
	for _, n := range rawIdentityAttrs {
		members[n] = tftypes.NewValue(tftypes.String, "1")
	}
	members["name"] = attrs["name"]
	return identityData(tftypes.NewValue(rawIdentityType, members))
}

// plannedIdentity is the prior identity as sent, or a null one for a
// create.
func plannedIdentity(prior *tfprotov6.ResourceIdentityData) (*tfprotov6.ResourceIdentityData, error) {
	if prior != nil {
		return prior, nil
	}
	return identityData(tftypes.NewValue(rawIdentityType, nil))
}

func identityData(v tftypes.Value) (*tfprotov6.ResourceIdentityData, error) {
	dv, err := tfprotov6.NewDynamicValue(rawIdentityType, v)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}, nil
}
