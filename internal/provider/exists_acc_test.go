package provider_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestAccRefusalAlreadyExists: creating a name the host already holds (an
// out-of-band create, or an earlier run whose answer was lost) ends in an
// "already exists" diagnostic naming the current UID and the import ID,
// never in a silent adoption.
func TestAccRefusalAlreadyExists(t *testing.T) {
	h := accHost(t, hosttest.Options{})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	ref := edgeRegistry(t).Types["takoform_edge_kv_namespace"].DefaultCreate
	req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: "taken", Space: "exists"}, Spec: json.RawMessage(`{}`)}
	p, err := c.Prepare(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	refusalCase(t, resource.TestStep{
		Config: providerBlock(h, "exists") + `
resource "takoform_edge_kv_namespace" "cache" {
  name = "taken"
}
`,
		ExpectError: diagRE("already exists on the host", "uid "+held.Metadata.UID, `"exists/taken"`,
			"Resource: takoform_edge_kv_namespace (exists/taken)", "Current UID: "+held.Metadata.UID,
			"Code: takoform.provider/already-exists", "If another resource already manages it", "choose another name", "If none does", "import it"),
	})
}
