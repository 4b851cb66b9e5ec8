package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/internal/testca"
)

// tlsHost starts a real host serving https with a certificate from a CA
// made here, with tokens a1, a2 (tenant acme) and b (tenant globex).
func tlsHost(t *testing.T) (h *servetest.Host, ca *testca.CA, caFile string) {
	t.Helper()
	dir := t.TempDir()
	ca = testca.New(t, "cli CA test")
	cert, key := ca.WritePair(t, dir, "host", "127.0.0.1")
	var f host.TokensFile
	for _, tok := range []struct{ tok, tenant string }{{"a1", "acme"}, {"a2", "acme"}, {"b", "globex"}} {
		f.Tokens = append(f.Tokens, host.Token{SHA256: host.HashToken(tok.tok), Tenant: tok.tenant, Principal: tok.tok})
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, b, 0o600); err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return servetest.Start(t, "--listen", "127.0.0.1:0", "--tokens", tokens, "--tls-cert", cert, "--tls-key", key), ca, caFile
}

// TestRecoverTrustsPrivateCA: recover reaches an https host whose
// certificate comes from a private CA given as --ca-certificate,
// --ca-certificate-file or TAKOFORM_CA_CERTIFICATE_FILE; without it the
// certificate is refused, and the error says "takoform:" once.
func TestRecoverTrustsPrivateCA(t *testing.T) {
	h, ca, caFile := tlsHost(t)
	plan := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(plan, []byte(`{"format_version":"1.2","planned_values":{"root_module":{}},"resource_changes":[]}`), 0o644)
	base := []string{"recover", "--plan", plan, "--endpoint", h.URL, "--token", "a1"}

	code, _, errOut := runCLI(base...)
	if code != 1 || !strings.Contains(errOut, "certificate") || strings.Contains(errOut, "takoform: takoform:") {
		t.Fatalf("without the CA: exit %d, err %q; want exit 1, a certificate failure, one takoform: prefix", code, errOut)
	}
	for name, args := range map[string][]string{
		"--ca-certificate":      append(append([]string{}, base...), "--ca-certificate", string(ca.CertPEM)),
		"--ca-certificate-file": append(append([]string{}, base...), "--ca-certificate-file", caFile),
	} {
		code, out, errOut := runCLI(args...)
		if code != 0 || out != "" || !strings.Contains(errOut, "nothing to import") {
			t.Errorf("%s: exit %d, out %q, err %q; want exit 0 and nothing to import", name, code, out, errOut)
		}
	}
	t.Setenv("TAKOFORM_CA_CERTIFICATE_FILE", caFile)
	if code, _, errOut := runCLI(base...); code != 0 {
		t.Errorf("TAKOFORM_CA_CERTIFICATE_FILE: exit %d, err %q", code, errOut)
	}
}

// TestConformanceTrustsPrivateCA: conformance run negotiates with, and
// runs a check against, an https host from a private CA.
func TestConformanceTrustsPrivateCA(t *testing.T) {
	h, ca, caFile := tlsHost(t)
	base := []string{"conformance", "run", "--endpoint", h.URL, "--token-a1", "a1", "--token-a2", "a2", "--token-b", "b", "--only", "unauthenticated-request-refused"}
	if code, _, errOut := runCLI(base...); code != 1 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("without the CA: exit %d, err %q; want a certificate failure", code, errOut)
	}
	code, out, errOut := runCLI(append(base, "--ca-certificate-file", caFile)...)
	if code != 0 || !strings.Contains(out, "PASS unauthenticated-request-refused") {
		t.Fatalf("--ca-certificate-file: exit %d, out %q, err %q", code, out, errOut)
	}
	t.Setenv("TAKOFORM_CA_CERTIFICATE", string(ca.CertPEM))
	if code, out, errOut := runCLI(base...); code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("TAKOFORM_CA_CERTIFICATE: exit %d, out %q, err %q", code, out, errOut)
	}
}
