package provider_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/internal/testca"
	"github.com/takoform/takoform/internal/version"
)

const deployToken = "token-of-the-deployed-host"

// deployedHost starts the real `takoform host serve` with a tokens file
// (mode 0600) and the extra flags.
func deployedHost(t *testing.T, flags ...string) *servetest.Host {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests need OpenTofu: run scripts/opentofu.sh (make test does) or set TF_ACC_TERRAFORM_PATH")
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	doc := fmt.Sprintf(`{"tokens":[{"sha256":%q,"tenant":"acme","principal":"ci"}]}`, host.HashToken(deployToken))
	if err := os.WriteFile(tokens, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return servetest.Start(t, append([]string{"--listen", "127.0.0.1:0", "--tokens", tokens}, flags...)...)
}

// kvGone is a CheckDestroy: the namespace no longer exists on the host.
func kvGone(t *testing.T, endpoint string, opts client.Options) resource.TestCheckFunc {
	return func(*terraform.State) error {
		opts.Token = deployToken
		c, err := client.New(context.Background(), endpoint, opts)
		if err != nil {
			return err
		}
		_, err = c.Read(context.Background(), client.Address{Space: "tls", Ref: edgeRef(t, "EdgeKVNamespace"), Name: "cache"})
		if !client.IsNotFound(err) {
			return fmt.Errorf("after destroy, reading the namespace answered %v; want not found", err)
		}
		return nil
	}
}

// tlsConfig is the configuration of the TLS tests: one namespace in space
// "tls", the provider block with extra attributes.
func tlsConfig(endpoint, extra string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    takoform = { source = "registry.opentofu.org/takoform/takoform" }
  }
}

provider "takoform" {
  endpoint = %q
  token    = %q
  space    = "tls"
  %s
}

resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}
`, endpoint, deployToken, extra)
}

func tlsKVSteps(cfg string) []resource.TestStep {
	return []resource.TestStep{
		{Config: cfg, Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "generation", "1"),
			resource.TestCheckResourceAttrSet("takoform_edge_kv_namespace.cache", "uid"),
		)},
		{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
	}
}

// TestAccOverTLSWithPrivateCA drives real OpenTofu over https to our host
// serving a certificate from a CA made in this test; the provider trusts
// that CA through ca_certificate (PEM in the configuration): apply, an
// empty plan, destroy.
func TestAccOverTLSWithPrivateCA(t *testing.T) {
	ca := testca.New(t, "takoform acceptance CA")
	cert, key := ca.WritePair(t, t.TempDir(), "host", "127.0.0.1")
	h := deployedHost(t, "--tls-cert", cert, "--tls-key", key)
	cfg := tlsConfig(h.URL, fmt.Sprintf("ca_certificate = %q", ca.CertPEM))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(edgeRegistry(t)),
		CheckDestroy:             kvGone(t, h.URL, client.Options{CACertificatePEM: ca.CertPEM}),
		Steps:                    tlsKVSteps(cfg),
	})

	// Refusals, each naming what to change: no CA (the system roots do not
	// know ours), a value that is not a certificate, both forms at once.
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, attr string
		want       *regexp.Regexp
	}{
		{"no CA", ``, diagRE("Cannot negotiate with the Takoform host", "certificate signed by unknown authority",
			"Code: takoform.provider/tls-untrusted", provider.ProviderRepairs["takoform.provider/tls-untrusted"])},
		{"not a certificate", `ca_certificate = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"`, diagRE("Invalid CA certificate",
			`ca_certificate (or TAKOFORM_CA_CERTIFICATE) holds a PEM block of type "PRIVATE KEY"`, "Code: takoform.provider/invalid-config", "Correct the attribute the message names.")},
		{"both forms", fmt.Sprintf("ca_certificate = %q\n  ca_certificate_file = %q", ca.CertPEM, caFile), diagRE("Invalid CA certificate",
			"both ca_certificate (or TAKOFORM_CA_CERTIFICATE) and ca_certificate_file (or TAKOFORM_CA_CERTIFICATE_FILE) are set; keep one")},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := tlsConfig(h.URL, c.attr)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: factories(edgeRegistry(t)),
				Steps:                    []resource.TestStep{{Config: bad, ExpectError: c.want}},
			})
		})
	}
}

// uaRecorder remembers every User-Agent the proxy forwarded.
type uaRecorder struct {
	mu   sync.Mutex
	seen map[string]bool
}

// TestAccThroughTLSProxy: a TLS-terminating reverse proxy (its certificate
// from a CA made here) in front of a plain-http host started with
// --public-url set to the proxy's origin. The proxy forwards the client's
// Host unchanged, so without --public-url discovery would advertise http://
// and the client would refuse the mismatched scheme. The provider trusts
// the CA through TAKOFORM_CA_CERTIFICATE_FILE, and sends the build's
// version in its User-Agent.
func TestAccThroughTLSProxy(t *testing.T) {
	ca := testca.New(t, "takoform proxy CA")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := ca.Issue(t, "proxy", "127.0.0.1")
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var target *url.URL
	ua := &uaRecorder{seen: map[string]bool{}}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // as proxies commonly do: the backend sees the public Host
		r.SetXForwarded()
		ua.mu.Lock()
		ua.seen[r.In.UserAgent()] = true
		ua.mu.Unlock()
	}}
	proxy := httptest.NewUnstartedServer(rp)
	proxy.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	proxy.StartTLS()
	t.Cleanup(proxy.Close)

	h := deployedHost(t, "--public-url", proxy.URL)
	if h.URL != proxy.URL {
		t.Fatalf("the host's first line %q does not print the public URL %s", h.First, proxy.URL)
	}
	target, err = url.Parse("http://" + h.Listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TAKOFORM_CA_CERTIFICATE_FILE", caFile)
	cfg := tlsConfig(proxy.URL, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"takoform": provider.NewServer(version.String(), edgeRegistry(t)),
		},
		CheckDestroy: kvGone(t, proxy.URL, client.Options{CACertificateFile: caFile}),
		Steps:        tlsKVSteps(cfg),
	})
	want := provider.UserAgent(version.String())
	ua.mu.Lock()
	defer ua.mu.Unlock()
	if !ua.seen[want] {
		t.Fatalf("the proxy never saw User-Agent %q; it saw %v", want, ua.seen)
	}
}
