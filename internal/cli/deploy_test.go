package cli_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/internal/testca"
	"github.com/takoform/takoform/wire"
)

func runCLI(args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	code = cli.Main(args, &o, &e)
	return code, o.String(), e.String()
}

// TestServeTLS: with --tls-cert/--tls-key the first line says https, a
// client trusting the test's CA negotiates and discovery advertises https;
// a client without the CA, and TLS 1.1, are refused.
func TestServeTLS(t *testing.T) {
	ca := testca.New(t, "takoform test CA")
	dir := t.TempDir()
	cert, key := ca.WritePair(t, dir, "host", "127.0.0.1", "localhost")
	s := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--tls-cert", cert, "--tls-key", key)
	u := s.URL
	if !strings.HasPrefix(u, "https://127.0.0.1:") || u != "https://"+s.Listen {
		t.Fatalf("first line %q: want https://<the listen address 127.0.0.1:port>", s.First)
	}
	c, err := client.New(context.Background(), u, client.Options{Token: "tok", CACertificatePEM: ca.CertPEM})
	if err != nil {
		t.Fatal(err)
	}
	if api := c.Discovery().Endpoints.API; api != u+wire.V1alpha3.APIBase {
		t.Fatalf("discovery advertises %q, want %q", api, u+wire.V1alpha3.APIBase)
	}
	if _, err := client.New(context.Background(), u, client.Options{Token: "tok"}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without the CA: %v; want a certificate verification failure", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(u, "https://"), &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11})
	if err == nil {
		conn.Close()
		t.Fatal("a TLS 1.1 handshake succeeded; the host must require TLS 1.2 or later")
	}
}

// TestSIGHUPReloadsCertificate: a renewed pair written over the files is
// served after SIGHUP; a broken pair is logged and the previous one keeps
// serving.
func TestSIGHUPReloadsCertificate(t *testing.T) {
	first, second := testca.New(t, "first CA"), testca.New(t, "second CA")
	dir := t.TempDir()
	cert, key := first.WritePair(t, dir, "host", "127.0.0.1")
	s := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--tls-cert", cert, "--tls-key", key)
	u := s.URL
	trusts := func(ca *testca.CA) error {
		_, err := client.New(context.Background(), u, client.Options{Token: "tok", CACertificatePEM: ca.CertPEM})
		return err
	}
	if err := trusts(first); err != nil {
		t.Fatal(err)
	}
	renewedCert, renewedKey := second.Issue(t, "host", "127.0.0.1")
	if err := os.WriteFile(cert, renewedCert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, renewedKey, 0o600); err != nil {
		t.Fatal(err)
	}
	servetest.SIGHUP(t)
	s.WaitLog(t, "TLS certificate reloaded")
	if err := trusts(second); err != nil {
		t.Fatalf("after SIGHUP the renewed certificate is not served: %v", err)
	}
	if err := os.WriteFile(key, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	servetest.SIGHUP(t)
	s.WaitLog(t, "the TLS certificate was not reloaded")
	if err := trusts(second); err != nil {
		t.Fatalf("a broken pair on SIGHUP took the served certificate away: %v", err)
	}
}

func writeTokens(t *testing.T, path string, mode os.FileMode, tokens ...string) {
	t.Helper()
	var f host.TokensFile
	for _, tok := range tokens {
		f.Tokens = append(f.Tokens, host.Token{SHA256: host.HashToken(tok), Tenant: "acme", Principal: tok})
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestSIGHUPReloadsTokens: token rotation without restart; a tokens file
// broken by a typo is logged and the previous tokens stay in force.
func TestSIGHUPReloadsTokens(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	writeTokens(t, tokens, 0o600, "old-token")
	s := servetest.Start(t, "--listen", "127.0.0.1:0", "--tokens", tokens)
	u := s.URL
	accepted := func(tok string) bool {
		_, err := client.New(context.Background(), u, client.Options{Token: tok})
		var we *wire.Error
		if err != nil && !(errors.As(err, &we) && we.Code == wire.Unauthenticated) {
			t.Fatalf("token %s: %v", tok, err)
		}
		return err == nil
	}
	if !accepted("old-token") || accepted("new-token") {
		t.Fatal("before rotation: want old-token accepted and new-token refused")
	}
	writeTokens(t, tokens, 0o600, "new-token")
	servetest.SIGHUP(t)
	s.WaitLog(t, "tokens file reloaded")
	if accepted("old-token") || !accepted("new-token") {
		t.Fatal("after SIGHUP: want new-token accepted and old-token refused")
	}
	if err := os.WriteFile(tokens, []byte(`{"tokens":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	servetest.SIGHUP(t)
	s.WaitLog(t, "the tokens file was not reloaded")
	if !accepted("new-token") {
		t.Fatal("a broken tokens file on SIGHUP took the tokens in force away")
	}
}

// TestStartRefusals: each unsafe start is refused with a message saying
// what to change (exit 2; 1 for a file that does not load), before
// anything serves.
func TestStartRefusals(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "host.db")
	cert, key := testca.New(t, "refusals CA").WritePair(t, dir, "host", "127.0.0.1")
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
		exit int // 2 a usage error, 1 a failure
	}{
		{"dev token off loopback", []string{"--listen", "0.0.0.0:0", "--dev-token", "tok"}, "is not a loopback address; listen on 127.0.0.1 or ::1, or drop --dev-token and give real credentials with --tokens FILE", 2},
		{"plain http off loopback", []string{"--listen", "0.0.0.0:0", "--tokens", "TOKENS"}, "serve TLS with --tls-cert and --tls-key, or, behind a TLS-terminating proxy, set --public-url https://", 2},
		{"plain http behind an http public url", []string{"--listen", "0.0.0.0:0", "--tokens", "TOKENS", "--public-url", "http://127.0.0.1:9"}, "set --public-url https://", 2},
		{"cert without key", []string{"--dev-token", "tok", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together", 2},
		{"public url with a path", []string{"--dev-token", "tok", "--public-url", "https://host.example/takoform"}, "--public-url: endpoint \"https://host.example/takoform\": it has a path", 2},
		{"public url plain http off loopback", []string{"--dev-token", "tok", "--public-url", "http://host.example"}, "plain http is allowed only for a loopback host", 2},
		{"strict and an open tokens file", []string{"--tokens", "OPEN", "--strict-permissions"}, "run chmod 600 " + filepath.Join(dir, "open.json"), 2},
		{"strict and an open TLS key", []string{"--tokens", "TOKENS", "--strict-permissions", "--tls-cert", cert, "--tls-key", key}, "the TLS key " + key + " has mode 0644", 2},
		{"a certificate that does not load", []string{"--dev-token", "tok", "--tls-cert", key, "--tls-key", key}, "load TLS certificate", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeTokens(t, filepath.Join(dir, "tokens.json"), 0o600, "tok")
			writeTokens(t, filepath.Join(dir, "open.json"), 0o644, "tok")
			args := []string{"host", "serve", "--data", data}
			for _, a := range c.args {
				a = strings.NewReplacer("TOKENS", filepath.Join(dir, "tokens.json"), "OPEN", filepath.Join(dir, "open.json")).Replace(a)
				args = append(args, a)
			}
			code, out, errOut := runCLI(args...)
			if code != c.exit || out != "" || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d naming %q", code, out, errOut, c.exit, c.want)
			}
		})
	}
	if _, err := os.Stat(data); err == nil {
		t.Fatal("a refused start created the data file")
	}
}

// TestOpenTokensFileWarnsAndChmodRepairs: without --strict-permissions an
// open tokens file starts with a warning; the chmod the refusal suggests
// lets a strict start succeed.
func TestOpenTokensFileWarnsAndChmodRepairs(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	writeTokens(t, tokens, 0o640, "tok")
	s := servetest.Start(t, "--listen", "127.0.0.1:0", "--tokens", tokens)
	if e := s.Log(); !strings.Contains(e, "level=WARN") || !strings.Contains(e, "tokens file is open to group or others") {
		t.Fatalf("no warning about the open tokens file; stderr:\n%s", e)
	}
	if err := os.Chmod(tokens, 0o600); err != nil {
		t.Fatal(err)
	}
	s = servetest.Start(t, "--listen", "127.0.0.1:0", "--tokens", tokens, "--strict-permissions")
	if e := s.Log(); strings.Contains(e, "open to group or others") {
		t.Fatalf("a 0600 tokens file was warned about:\n%s", e)
	}
}

// TestPlainHTTPBehindProxyWarnsAndAdvertisesPublicURL: a non-loopback
// plain-http listener starts only with --public-url https://…, prints that
// origin first, warns, and discovery advertises it whatever Host the
// request carried.
func TestPlainHTTPBehindProxyWarnsAndAdvertisesPublicURL(t *testing.T) {
	s := servetest.Start(t, "--listen", "0.0.0.0:0", "--tokens", func() string {
		p := filepath.Join(t.TempDir(), "tokens.json")
		writeTokens(t, p, 0o600, "tok")
		return p
	}(), "--public-url", "https://takoform.example:8443")
	if s.URL != "https://takoform.example:8443" {
		t.Fatalf("first line %q: want the public URL", s.First)
	}
	_, port, err := net.SplitHostPort(s.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Log(); !strings.Contains(e, "level=WARN") || !strings.Contains(e, "serving plain http on a non-loopback listener") {
		t.Fatalf("no warning line; stderr:\n%s", e)
	}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+wire.V1alpha3.DiscoveryPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d wire.Discovery
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if want := "https://takoform.example:8443" + wire.V1alpha3.APIBase; d.Endpoints.API != want {
		t.Fatalf("discovery reached as http://127.0.0.1:%s advertises %q, want %q", port, d.Endpoints.API, want)
	}
}
