package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
)

// TestMain points terraform-plugin-testing at the repository's OpenTofu
// (scripts/opentofu.sh builds it) and at a CLI config of our own, and
// says in one line when no Terraform >= 1.11 is on PATH for the tests
// that also run under it (clis).
func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		_, file, _, _ := runtime.Caller(0)
		tofu := filepath.Join(filepath.Dir(file), "..", "..", "tools", "opentofu-v1.12.6", "tofu")
		if _, err := os.Stat(tofu); err == nil {
			setenv(map[string]string{"TF_ACC_TERRAFORM_PATH": tofu, "TF_ACC": "1"})
		}
	}
	setenv(map[string]string{"TF_ACC_PROVIDER_HOST": "registry.opentofu.org", "TF_ACC_PROVIDER_NAMESPACE": "takoform"})
	dir, err := os.MkdirTemp("", "takoform-acc")
	if err != nil {
		panic(err)
	}
	cfg := filepath.Join(dir, "tofu.rc")
	if err := os.WriteFile(cfg, []byte("# takoform acceptance tests: no registry, no plugin cache\n"), 0o644); err != nil {
		panic(err)
	}
	setenv(map[string]string{"TF_CLI_CONFIG_FILE": cfg})
	if note := terraformNote(); note != "" && os.Getenv("TF_ACC") != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "remove", dir+":", err)
		code = 1
	}
	os.Exit(code)
}

// setenv sets the environment variables of TestMain; one that cannot be
// set stops the tests.
func setenv(vars map[string]string) {
	for k, v := range vars {
		if err := os.Setenv(k, v); err != nil {
			panic(err)
		}
	}
}

// accHost starts our host in-process on a temporary SQLite file. Without
// o.Catalog it serves the v1alpha3-era host, our v1alpha1 edition on lane
// v1alpha3 alone (--forms builtin/v1alpha1): the tests over it hold the
// v1alpha1 family's behaviour, and the provider creates there because no
// other lane lists the types (spec/lane-v1beta1.md §13.6 rule 1). The tests
// of both lanes start their host with both editions (lanes_acc_test.go).
func accHost(t *testing.T, o hosttest.Options) *hosttest.Host {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests need OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	if o.Catalog == nil {
		cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{host.BuiltinV1alpha1}, nil))
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog, o.Lanes = cat, lanes
	}
	return hosttest.Start(t, o)
}

func factories(reg *provider.Registry) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"takoform": provider.NewServer("test", reg),
	}
}

func edgeRegistry(t *testing.T) *provider.Registry {
	reg, err := provider.EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func providerBlock(h *hosttest.Host, space string) string {
	return providerEndpointBlock(h.URL, space)
}

// providerEndpointBlock is the terraform and provider blocks for a host at
// endpoint, as tenant-a principal-1 in space.
func providerEndpointBlock(endpoint, space string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {
  endpoint = %q
  token    = %q
  space    = %q
}
`, endpoint, hosttest.TokenA1, space)
}
