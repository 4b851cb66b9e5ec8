package client

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/testca"
)

func TestCertPool(t *testing.T) {
	ca := testca.New(t, "pool test CA")
	other := testca.New(t, "second CA")
	_, key := ca.Issue(t, "leaf", "127.0.0.1")
	if _, err := CertPool(append(append([]byte("comment\n"), ca.CertPEM...), other.CertPEM...), "bundle"); err != nil {
		t.Fatalf("a bundle of two CA certificates: %v", err)
	}
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", "holds no PEM certificate"},
		{"not PEM", "MIIB...", "holds no PEM certificate"},
		{"a private key", string(key), `PEM block of type "PRIVATE KEY"`},
		{"garbage DER", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 1 does not parse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CertPool([]byte(c.in), "ca_certificate")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ca_certificate") {
				t.Fatalf("got %v, want an error naming ca_certificate and %q", err, c.want)
			}
		})
	}
}

func TestCAOptionsRefusals(t *testing.T) {
	ca := testca.New(t, "options CA")
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"both forms", Options{CACertificatePEM: ca.CertPEM, CACertificateFile: file}, "not both"},
		{"with an HTTPClient", Options{CACertificatePEM: ca.CertPEM, HTTPClient: &http.Client{}}, "set RootCAs on the HTTPClient's transport"},
		{"missing file", Options{CACertificateFile: file + ".missing"}, "read the CA certificate file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newClient("https://host.example", c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	for _, o := range []Options{{CACertificatePEM: ca.CertPEM}, {CACertificateFile: file}} {
		c, err := newClient("https://host.example", o)
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := c.hc.Transport.(*http.Transport)
		if !ok || tr.TLSClientConfig == nil || tr.TLSClientConfig.RootCAs == nil {
			t.Fatalf("the client's transport does not carry the CA pool: %#v", c.hc.Transport)
		}
	}
}
