package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/store/postgres"
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
					servePostgres(t, target, ln)
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

// servePostgres serves a host on the PostgreSQL database at dbURL, with
// hosttest's credentials, on ln until the test ends.
func servePostgres(t *testing.T, dbURL string, ln net.Listener) {
	st, err := postgres.Open(context.Background(), dbURL, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := host.New(context.Background(), host.Config{Store: st, Catalog: cat, Family: host.DefaultFamily(cat), Tokens: []host.Token{
		{SHA256: host.HashToken(hosttest.TokenA1), Tenant: "tenant-a", Principal: "principal-1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("PostgreSQL host: %v", err)
		}
		srv.Close()
		st.Close()
	})
}
