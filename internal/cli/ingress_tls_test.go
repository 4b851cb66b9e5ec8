package cli_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/devca"
	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/internal/testca"
)

// ingressAddr is the ingress address the host logged.
func ingressAddr(t *testing.T, h *servetest.Host) string {
	t.Helper()
	h.WaitLog(t, "worker ingress listening")
	m := regexp.MustCompile(`worker ingress listening" ingress=(\S+)`).FindStringSubmatch(h.Log())
	if m == nil {
		t.Fatalf("no ingress address in the log:\n%s", h.Log())
	}
	return m[1]
}

// ingressGet requests https (trusting roots, SNI and Host = name) or http.
func ingressGet(addr, scheme, name string, roots *x509.CertPool) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: name}}}
	req, err := http.NewRequest(http.MethodGet, scheme+"://"+addr+"/", nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = name
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestServeIngressDevCA: a loopback ingress with a SQLite file makes the
// dev CA beside the data file (key 0600), prints its path, answers https
// for a .localhost name to a client trusting only that CA, still answers
// http on the same port, and gives a name outside .localhost no
// certificate; a restart reuses the CA.
func TestServeIngressDevCA(t *testing.T) {
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--ingress", "127.0.0.1:0")
	addr := ingressAddr(t, h)
	caPath := h.Data + ".devca/" + devca.CertFile
	h.WaitLog(t, "ingress dev CA for .localhost names")
	if !strings.Contains(h.Log(), caPath) {
		t.Fatalf("the log does not name the CA %s:\n%s", caPath, h.Log())
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(caPath), devca.KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the dev CA key: %v", err)
	}
	pemBytes, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	name := "ep-0123456789abcdef.workers.takoform.localhost"
	status, body, err := ingressGet(addr, "https", name, roots)
	if err != nil || status != http.StatusNotFound || !strings.HasPrefix(body, "404") {
		t.Errorf("https for an unknown .localhost name: %d %q %v, want the host's 404 over TLS", status, body, err)
	}
	if status, _, err := ingressGet(addr, "http", name, nil); err != nil || status != http.StatusNotFound {
		t.Errorf("http on the same port: %d %v, want the host's 404", status, err)
	}
	if _, _, err := ingressGet(addr, "https", "worker.example.com", roots); err == nil {
		t.Error("a name outside .localhost got a certificate from the dev CA")
	}
}

// TestServeIngressOperatorCertificate: --ingress-tls-cert/--ingress-tls-key
// serve names outside .localhost and are re-read on SIGHUP.
func TestServeIngressOperatorCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := testca.New(t, "ingress CA")
	cert, key := ca.WritePair(t, dir, "workers.example.test", "workers.example.test")
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--ingress", "127.0.0.1:0",
		"--ingress-tls-cert", cert, "--ingress-tls-key", key)
	addr := ingressAddr(t, h)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	if status, _, err := ingressGet(addr, "https", "workers.example.test", roots); err != nil || status != http.StatusNotFound {
		t.Fatalf("https with the operator's certificate: %d %v", status, err)
	}
	next := testca.New(t, "ingress CA 2")
	c2, k2 := next.Issue(t, "workers.example.test", "workers.example.test")
	if err := os.WriteFile(cert, c2, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, k2, 0o600); err != nil {
		t.Fatal(err)
	}
	servetest.SIGHUP(t)
	h.WaitLog(t, "SIGHUP: ingress TLS certificate reloaded")
	roots2 := x509.NewCertPool()
	roots2.AppendCertsFromPEM(next.CertPEM)
	if status, _, err := ingressGet(addr, "https", "workers.example.test", roots2); err != nil || status != http.StatusNotFound {
		t.Errorf("https after SIGHUP with the new certificate: %d %v", status, err)
	}
}
