package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/provider"
)

// TestMain points terraform-plugin-testing at the repository's OpenTofu
// (scripts/opentofu.sh builds it) and at a CLI config of our own.
func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		_, file, _, _ := runtime.Caller(0)
		tofu := filepath.Join(filepath.Dir(file), "..", "..", "tools", "opentofu-v1.12.6", "tofu")
		if _, err := os.Stat(tofu); err == nil {
			os.Setenv("TF_ACC_TERRAFORM_PATH", tofu)
			os.Setenv("TF_ACC", "1")
		}
	}
	os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "takoform")
	dir, _ := os.MkdirTemp("", "takoform-acc")
	cfg := filepath.Join(dir, "tofu.rc")
	os.WriteFile(cfg, []byte("# takoform acceptance tests: no registry, no plugin cache\n"), 0o644)
	os.Setenv("TF_CLI_CONFIG_FILE", cfg)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// accHost starts our host in-process on a temporary SQLite file.
func accHost(t *testing.T, o hosttest.Options) *hosttest.Host {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests need OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	return hosttest.Start(t, o)
}

func factories(reg *provider.Registry) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"takoform": providerserver.NewProtocol6WithError(provider.New("test", reg)()),
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
