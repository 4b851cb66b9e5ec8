package ingress_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/devca"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/host/runtime/ingress"
)

// TestIngressAnswersHTTPSWithTheDevCA: a client trusting only the host's
// dev CA reaches a worker on real workerd over TLS with SNI = its endpoint
// hostname and gets the worker's answer; a name
// outside .localhost gets no certificate (spec/runtime-v1.md §10.1).
func TestIngressAnswersHTTPSWithTheDevCA(t *testing.T) {
	binary := enginetest.Binary(t)
	h, _ := startHost(t, binary)
	_, _, hostname := deployLogging(t, h)
	ca, _, err := devca.Load(filepath.Join(t.TempDir(), "devca"))
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewUnstartedServer(&ingress.Handler{Routes: h.Runtime, Log: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	front.TLS = &tls.Config{GetCertificate: ca.GetCertificate, MinVersion: tls.VersionTLS12}
	front.StartTLS()
	defer front.Close()
	pemBytes, err := os.ReadFile(ca.CertPath)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	clientFor := func(serverName string) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName}}}
	}
	get := func(c *http.Client, host string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, front.URL+"/tls", nil)
		if err != nil {
			return 0, "", err
		}
		req.Host = host
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	c := clientFor(hostname)
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, body, err := get(c, hostname)
		if err != nil {
			t.Fatalf("GET https://%s/ trusting the dev CA: %v", hostname, err)
		}
		if status == http.StatusOK {
			if body != "ok" {
				t.Fatalf("the worker answered %q over TLS", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker never answered over TLS: %d %q", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, _, err := get(clientFor("worker.example.com"), "worker.example.com"); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Errorf("a name outside .localhost: %v, want a failed TLS handshake", err)
	}
}
