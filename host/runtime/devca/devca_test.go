package devca_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/host/runtime/devca"
)

// TestDevCAIsMadeOnceAndIssuesOnlyLocalhostNames: the CA is created once
// (key 0600) and reloaded after; a .localhost name gets a leaf that
// verifies against the CA for that name; any other name gets none.
func TestDevCAIsMadeOnceAndIssuesOnlyLocalhostNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	ca, created, err := devca.Load(dir)
	if err != nil || !created {
		t.Fatalf("first Load: created %v, %v", created, err)
	}
	fi, err := os.Stat(filepath.Join(dir, devca.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the CA key: %v, mode %v; want 0600", err, fi.Mode())
	}
	pemBytes, err := os.ReadFile(ca.CertPath)
	if err != nil {
		t.Fatal(err)
	}
	again, created, err := devca.Load(dir)
	if err != nil || created {
		t.Fatalf("second Load: created %v, %v; want the same CA", created, err)
	}
	if b, _ := os.ReadFile(again.CertPath); string(b) != string(pemBytes) {
		t.Fatal("the second Load changed the CA certificate")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("the CA certificate is not PEM")
	}
	name := "ep-0123456789abcdef.workers.takoform.localhost"
	leaf, err := again.GetCertificate(&tls.ClientHelloInfo{ServerName: name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
		t.Errorf("the leaf does not verify for %s: %v", name, err)
	}
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.localhost"}); err == nil {
		t.Error("the leaf verifies for another name")
	}
	for _, other := range []string{"example.com", "", "localhost.example.com", "xlocalhost"} {
		if _, err := again.GetCertificate(&tls.ClientHelloInfo{ServerName: other}); !errors.Is(err, devca.ErrNotCovered) {
			t.Errorf("server name %q: %v, want ErrNotCovered", other, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, devca.KeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := devca.Load(dir); err == nil {
		t.Error("a CA without its key loaded")
	}
}
