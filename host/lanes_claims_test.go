package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// TestHostnameClaimSpansEdgeGroups: a WorkerCustomDomain of either Edge
// group blocks the same canonical hostname in the other group, in any
// space of the tenant, and the refusal names the holder's group, kind,
// space and name; deleting the holder frees the name for the other group
// (spec/lane-v1beta1.md §2.5 rule 7), on both stores.
func TestHostnameClaimSpansEdgeGroups(t *testing.T) {
	beta := testref.V1beta1Dir(t)
	stores(t, func(t *testing.T, data string) {
		cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{host.BuiltinV1alpha1, beta}, dirFS))
		if err != nil {
			t.Fatal(err)
		}
		h := hosttest.Start(t, hosttest.Options{Catalog: cat, Lanes: lanes, Data: data})
		ctx := context.Background()
		creds := conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}
		envs := map[wire.Lane]*conformance.Env{}
		for _, l := range wire.Lanes {
			if envs[l], err = conformance.NewEnvOptions(ctx, h.URL, creds, false, client.Options{Lane: l}); err != nil {
				t.Fatal(err)
			}
		}
		alpha, betaEnv := envs[wire.V1alpha3], envs[wire.V1beta1]
		app, err := alpha.DeployApp(ctx, alpha.A1, "fetch")
		if err != nil {
			t.Fatal(err)
		}
		alphaDomain := func() (*wire.Resource, error) {
			return alpha.Create(ctx, alpha.A1, "WorkerCustomDomain", alpha.Name("domain"), map[string]any{"worker": alpha.Rel("ModuleWorker", app.Worker.Metadata.Name), "hostname": "Shop.Example.COM."})
		}
		held, err := alphaDomain()
		if err != nil {
			t.Fatal(err)
		}
		betaApp, err := betaEnv.DeployApp(ctx, betaEnv.A1, "fetch")
		if err != nil {
			t.Fatal(err)
		}
		worker := betaApp.Worker
		betaDomain := func() (*wire.Resource, error) {
			return betaEnv.Create(ctx, betaEnv.A1, "WorkerCustomDomain", betaEnv.Name("domain"), map[string]any{"worker": betaEnv.Rel("ModuleWorker", worker.Metadata.Name), "hostname": "shop.example.com"})
		}
		_, err = betaDomain()
		claimed(t, err, wire.V1alpha3.EdgeGroup, held)
		if err := alpha.Delete(ctx, alpha.A1, held); err != nil {
			t.Fatal(err)
		}
		heldB, err := betaDomain()
		if err != nil {
			t.Fatalf("the hostname freed by the v1alpha1 domain's delete: %v", err)
		}
		_, err = alphaDomain()
		claimed(t, err, wire.V1beta1.EdgeGroup, heldB)
	})
}

// claimed checks err is the hostname_claimed refusal naming holder.
func claimed(t *testing.T, err error, group string, holder *wire.Resource) {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.InvalidArgument || we.HostCode != "hostname_claimed" {
		t.Fatalf("a hostname the other Edge group holds: %v, want invalid_argument hostname_claimed", err)
	}
	for _, w := range []string{group, "WorkerCustomDomain", `"` + holder.Metadata.Name + `"`, `space "` + holder.Metadata.Space + `"`} {
		if !strings.Contains(we.Message, w) {
			t.Errorf("the refusal does not name %s: %s", w, we.Message)
		}
	}
}
