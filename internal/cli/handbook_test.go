package cli_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/servetest"
	"github.com/takoform/takoform/internal/testca"
	"github.com/takoform/takoform/wire"
)

// handbookUnit returns the Environment= settings and the ExecStart of the
// systemd unit in handbook/running.md, "A systemd unit".
func handbookUnit(t *testing.T) (env map[string]string, exec string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "handbook", "running.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## A systemd unit\n")
	if !ok {
		t.Fatal(`handbook/running.md has no "A systemd unit" section`)
	}
	_, unit, ok := strings.Cut(after, "```ini\n")
	if !ok {
		t.Fatal("the systemd unit section has no ```ini unit")
	}
	unit, _, _ = strings.Cut(unit, "```")
	env = map[string]string{}
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, "Environment="); ok {
			k, val, _ := strings.Cut(v, "=")
			env[k] = val
		}
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = v
		}
	}
	return env, exec
}

// TestHandbookSystemdUnitServes starts host serve the way the handbook's
// systemd unit (handbook/running.md) does: no flags, every setting from its Environment= lines (files
// moved into a temporary directory, the port made free). It serves TLS
// with the unit's certificate and key, checks the permissions strictly,
// and discovery advertises the unit's public URL.
func TestHandbookSystemdUnitServes(t *testing.T) {
	env, exec := handbookUnit(t)
	if !strings.HasSuffix(exec, "takoform host serve") {
		t.Fatalf("ExecStart=%s: want the bare `takoform host serve` (settings in the environment)", exec)
	}
	dir := t.TempDir()
	ca := testca.New(t, "handbook CA")
	pu, err := url.Parse(env["TAKOFORM_PUBLIC_URL"])
	if err != nil {
		t.Fatal(err)
	}
	u := pu.Hostname()
	cert, key := ca.WritePair(t, dir, "tls", u)
	writeTokens(t, filepath.Join(dir, "tokens.json"), 0o600, "tok")
	for k, v := range env {
		switch {
		case k == "TAKOFORM_LISTEN":
			host, _, err := net.SplitHostPort(v)
			if err != nil {
				t.Fatal(err)
			}
			v = net.JoinHostPort(host, "0")
		case k == "TAKOFORM_TLS_CERT":
			v = cert
		case k == "TAKOFORM_TLS_KEY":
			v = key
		case strings.HasPrefix(v, "/"):
			v = filepath.Join(dir, filepath.Base(v))
		}
		t.Setenv(k, v)
	}
	h := servetest.Start(t)
	if h.URL != env["TAKOFORM_PUBLIC_URL"] {
		t.Fatalf("first line %q: want the unit's public URL %s", h.First, env["TAKOFORM_PUBLIC_URL"])
	}
	if strings.Contains(h.Log(), "open to group or others") {
		t.Fatalf("the handbook's modes are warned about:\n%s", h.Log())
	}
	_, port, err := net.SplitHostPort(h.Listen)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: u},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}}
	req, err := http.NewRequest(http.MethodGet, env["TAKOFORM_PUBLIC_URL"]+wire.V1alpha3.DiscoveryPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d wire.Discovery
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if want := env["TAKOFORM_PUBLIC_URL"] + wire.V1alpha3.APIBase; d.Endpoints.API != want {
		t.Fatalf("discovery advertises %q, want %q", d.Endpoints.API, want)
	}
}
