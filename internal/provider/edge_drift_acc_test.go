package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// loseOutOfBand makes the host lose a resource behind everyone's back
// (the test-only probe external-change: a backend-side delete that no
// relation protects), so the resources that pin it drift.
func loseOutOfBand(t *testing.T, h *hosttest.Host, space, kind, name string) {
	t.Helper()
	ref := edgeRef(t, kind)
	res, err := hostClient(t, h).Read(context.Background(), client.Address{Space: space, Ref: ref, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"space": {space}, "group": {ref.APIVersion}, "kind": {ref.Kind},
		"definitionVersion": {ref.DefinitionVersion}, "schemaDigest": {ref.SchemaDigest}}
	req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s%s/resources/%s/%s/%s?%s", h.URL, wire.V1alpha3.APIBase, ref.APIVersion, ref.Kind, name, q.Encode()), nil)
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	req.Header.Set(wire.HeaderIdempotency, "lose-"+name)
	req.Header.Set(wire.HeaderGeneration, res.Metadata.Generation)
	req.Header.Set(wire.HeaderProbe, "external-change")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("out-of-band delete of %s %s: HTTP %d", kind, name, resp.StatusCode)
	}
}

// TestAccEdgeRelationDrift: the consumer's dead-letter queue is lost out
// of band. Refresh drops the queue and reports the consumer's drift; the
// plan re-creates the queue and repairs the consumer in place (a
// spec-identical apply re-pins the relation); afterwards all is Ready and
// the plan is empty.
func TestAccEdgeRelationDrift(t *testing.T) {
	h := accHost(t, hosttest.Options{Probe: true})
	cfg := providerBlock(h, "prod") + defaultStack(t).hcl()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() { loseOutOfBand(t, h, "prod", "AtLeastOnceQueue", "jobs-dlq") },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("takoform_at_least_once_queue.dlq", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("takoform_queue_consumer.jobs", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("takoform_queue_consumer.jobs", tfjsonpath.New("generation"), knownvalue.StringExact("1")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "ready", "true"),
					resource.TestCheckNoResourceAttr("takoform_queue_consumer.jobs", "relation_drift_reason"),
					resource.TestCheckResourceAttr("takoform_queue_consumer.jobs", "generation", "1"),
				),
			},
		},
	})
}

// createKV creates an EdgeKVNamespace through the Go client, outside the
// configuration.
func createKV(t *testing.T, h *hosttest.Host, space, name string) *wire.Resource {
	t.Helper()
	res, err := applyKV(hostClient(t, h), edgeRef(t, "EdgeKVNamespace"), space, name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// applyKV prepares and applies a create of an EdgeKVNamespace as c; safe
// on any goroutine.
func applyKV(c *client.Client, ref form.FormRef, space, name string) (*wire.Resource, error) {
	ctx := context.Background()
	req := wire.ResourceRequest{APIVersion: ref.APIVersion, Kind: ref.Kind, Form: wire.FormReference{FormRef: ref},
		Metadata: wire.Metadata{Name: name, Space: space}, Spec: []byte("{}")}
	p, err := c.Prepare(ctx, req, "")
	if err != nil {
		return nil, err
	}
	return c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
}

// TestAccEdgeUIDMismatch: the namespace in state is lost and another
// incarnation takes its name. Refresh refuses to rebind (a hard error that
// keeps state, naming both UIDs); once the stranger is gone, refresh drops
// the resource and apply creates it again.
func TestAccEdgeUIDMismatch(t *testing.T) {
	h := accHost(t, hosttest.Options{Probe: true})
	cfg := providerBlock(h, "prod") + `resource "takoform_edge_kv_namespace" "cache" { name = "cache" }`
	var stranger *wire.Resource
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					loseOutOfBand(t, h, "prod", "EdgeKVNamespace", "cache")
					stranger = createKV(t, h, "prod", "cache")
				},
				Config: cfg,
				ExpectError: diagRE("A different incarnation now holds this name", "Resource: takoform_edge_kv_namespace (prod/cache)",
					"Expected UID: u-", "Current UID: u-", "Code: takoform.provider/uid-mismatch",
					"Import the resource now under this name, restore the recorded one, or delete the replacement; state was kept."),
			},
			{
				PreConfig: func() {
					a := client.Address{Space: "prod", Ref: edgeRef(t, "EdgeKVNamespace"), Name: "cache"}
					if err := hostClient(t, h).DeleteAndWait(context.Background(), a, client.Precondition{Generation: stranger.Metadata.Generation, UID: stranger.Metadata.UID}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				Check: func(st *terraform.State) error {
					if uid := st.RootModule().Resources["takoform_edge_kv_namespace.cache"].Primary.Attributes["uid"]; uid == stranger.Metadata.UID || uid == "" {
						return fmt.Errorf("uid %q after re-create", uid)
					}
					return nil
				},
			},
		},
	})
}
