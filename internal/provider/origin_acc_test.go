package provider_test

import (
	"net"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/takoform/takoform/internal/provider"
	"github.com/takoform/takoform/internal/version"
)

// TestAccEndpointOriginMismatch: a host started with --public-url
// http://localhost:P and a provider endpoint http://127.0.0.1:P (one host,
// two names) is endpoint-origin-mismatch, whose repair names the
// advertised origin and the endpoint, not host-response-invalid; following
// the repair (the endpoint set to the advertised origin) applies.
func TestAccEndpointOriginMismatch(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("a tcp listener on %T", l.Addr())
	}
	port := addr.AddrPort().Port()
	if err := l.Close(); err != nil { // the host listens on it next
		t.Fatal(err)
	}
	listen := net.JoinHostPort("127.0.0.1", itoa(int(port)))
	advertised, endpoint := "http://localhost:"+itoa(int(port)), "http://"+listen
	deployedHost(t, "--listen", listen, "--public-url", advertised)
	repair := "Set the provider's endpoint to " + advertised + " (the origin the host advertises), or start the host with --public-url " +
		endpoint + " if that is the address clients should use."
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"takoform": provider.NewServer(version.String(), edgeRegistry(t)),
		},
		Steps: []resource.TestStep{
			{
				Config: tlsConfig(endpoint, ""),
				ExpectError: diagRE("Cannot negotiate with the Takoform host", "origin "+advertised+" is not the configured endpoint "+endpoint,
					"Code: takoform.provider/endpoint-origin-mismatch", "Retryable: no", repair),
			},
			{Config: tlsConfig(advertised, ""), Check: resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "generation", "1")},
		},
	})
}
