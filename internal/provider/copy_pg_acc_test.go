package provider_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/host/store/storecopy"
	"github.com/takoform/takoform/internal/hosttest"
)

// State made against a SQLite host plans empty after `host copy` moves the
// host to PostgreSQL and the provider's endpoint moves with it; the
// PostgreSQL host then takes changes and the destroy
// (spec/decisions/0012-copy-sqlite-to-postgres.md).
func TestAccStatePlansEmptyAfterCopyToPostgres(t *testing.T) {
	target := pgtest.URL(t)
	h := accHost(t, hosttest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the PostgreSQL host's address, known before it starts
	if err != nil {
		t.Fatal(err)
	}
	pgEndpoint := "http://" + ln.Addr().String()
	resources := func(names ...string) string {
		out := ""
		for _, n := range names {
			out += fmt.Sprintf("\nresource \"takoform_edge_kv_namespace\" %q {\n  name = %q\n}\n", n, n)
		}
		return out
	}
	onSQLite := providerBlock(h, "Moving") + resources("cache", "sessions")
	onPostgres := providerEndpointBlock(pgEndpoint, "Moving") + resources("cache", "sessions")
	grown := providerEndpointBlock(pgEndpoint, "Moving") + resources("cache", "sessions", "flags")
	var uid string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		Steps: []resource.TestStep{
			{
				Config: onSQLite,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith("takoform_edge_kv_namespace.cache", "uid", func(v string) error {
						uid = v
						return nil
					}),
				),
			},
			{
				PreConfig: func() {
					h.Stop()
					if _, err := storecopy.Copy(context.Background(), h.Path, target); err != nil {
						t.Fatalf("host copy: %v", err)
					}
					hosttest.Start(t, hosttest.Options{Data: target, Listener: ln})
				},
				Config:           onPostgres,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.TestCheckResourceAttrWith("takoform_edge_kv_namespace.cache", "uid", func(v string) error {
					if v != uid {
						return fmt.Errorf("uid %s after the move, want %s", v, uid)
					}
					return nil
				}),
			},
			{Config: grown, Check: resource.TestCheckResourceAttrSet("takoform_edge_kv_namespace.flags", "uid")},
			{Config: grown, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
