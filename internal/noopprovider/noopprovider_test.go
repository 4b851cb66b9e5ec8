package noopprovider_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/takoform/takoform/internal/noopprovider"
)

// The floor the benchmark compares against is one resource type with one
// required string attribute: anything wider would measure schema width,
// not the protocol.
func TestSchemaIsOneNameAttribute(t *testing.T) {
	srv, err := providerserver.NewProtocol6WithError(noopprovider.New())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("diagnostic: %s: %s", d.Summary, d.Detail)
	}
	if len(resp.ResourceSchemas) != 1 {
		t.Fatalf("resource types = %d, want 1", len(resp.ResourceSchemas))
	}
	s := resp.ResourceSchemas["noop_thing"]
	if s == nil {
		t.Fatal("no noop_thing resource type")
	}
	attrs := s.Block.Attributes
	if len(attrs) != 1 || attrs[0].Name != "name" || !attrs[0].Required {
		t.Fatalf("noop_thing attributes = %+v, want one required name", attrs)
	}
}
