package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// identityType, built from identityMembers, is the Terraform type of the
// identity schema the framework is given.
func TestIdentityTypeIsTheSchemas(t *testing.T) {
	var ir resource.IdentitySchemaResponse
	(&Resource{}).IdentitySchema(context.Background(), resource.IdentitySchemaRequest{}, &ir)
	if got := ir.IdentitySchema.Type().TerraformType(context.Background()); !got.Equal(identityType) {
		t.Fatalf("identity schema type %s, identityType %s", got, identityType)
	}
}
