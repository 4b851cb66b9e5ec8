package conformance_test

import (
	"context"
	"os"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

// The two checks lane v1beta1 adds pass against our host serving the
// public v1beta1 family (spec/lane-v1beta1.md §14) and against our host
// serving its built-in family (our v1beta1 edition on lane v1beta1), and
// skip, saying so, against a host that serves no v1beta1 family (only the
// built-in v1alpha1 edition).
func TestV1beta1Checks(t *testing.T) {
	cat, err := host.LoadCatalog(os.DirFS(testref.V1beta1Dir(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	creds := conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}
	beta := hosttest.Start(t, hosttest.Options{Catalog: cat})
	env, err := conformance.NewEnvOptions(ctx, beta.URL, creds, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	builtin := hosttest.Start(t, hosttest.Options{})
	builtinEnv, err := conformance.NewEnvOptions(ctx, builtin.URL, creds, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	alphaCat, alphaLanes, err := host.LoadFamilies(host.FamilySources([]string{host.BuiltinV1alpha1}, nil))
	if err != nil {
		t.Fatal(err)
	}
	old := hosttest.Start(t, hosttest.Options{Catalog: alphaCat, Lanes: alphaLanes})
	oldEnv, err := conformance.NewEnvOptions(ctx, old.URL, creds, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	if len(conformance.V1beta1Checks) != 2 {
		t.Fatalf("%d v1beta1 checks, want the 2 of spec/lane-v1beta1.md §14", len(conformance.V1beta1Checks))
	}
	for _, c := range conformance.V1beta1Checks {
		t.Run(c.ID, func(t *testing.T) {
			if r := conformance.RunCheck(ctx, env, c); r.Err != nil {
				t.Fatalf("%s (%s): %v", c.ID, c.Summary, r.Err)
			}
			if r := conformance.RunCheck(ctx, builtinEnv, c); r.Err != nil || r.Skipped {
				t.Fatalf("%s against the built-in family: %v (skipped %v)", c.ID, r.Err, r.Skipped)
			}
			if r := conformance.RunCheck(ctx, oldEnv, c); !r.Skipped {
				t.Fatalf("against a host without the v1beta1 family: %v, want a skip", r.Err)
			}
		})
	}
}
