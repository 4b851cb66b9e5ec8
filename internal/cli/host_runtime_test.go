package cli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/servetest"
)

// TestServeWithAnIngressThatCannotBind: --ingress on a taken port logs
// and prints that the ingress does not serve, and the control plane
// serves on, ready, with the data plane's state in /readyz's detail.
func TestServeWithAnIngressThatCannotBind(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--ingress", taken.Addr().String())
	h.WaitLog(t, "worker ingress not serving; the control plane serves on")
	resp, err := http.Get(h.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health host.Health
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || health.Checks["dataplane"].Detail == "" {
		t.Errorf("/readyz with an unbound ingress: %d %+v, want ready with a dataplane detail", resp.StatusCode, health)
	}
}

// TestServeRefusesAWorkerdThatIsNoBinary: --workerd naming no executable
// stops the host before it serves, naming the path.
func TestServeRefusesAWorkerdThatIsNoBinary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-workerd")
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t", "--workerd", missing}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "--workerd names "+missing) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("it started serving: %s", out.String())
	}
}

// TestRuntimeTestListener: --runtime-test-listen under --conformance-probe
// serves a loopback listener that routes every request as its hostname
// (spec/runtime-v1.md §10.1), here a .localhost custom domain, which needs
// no ownership proof (§10.6); without --conformance-probe or with a
// non-loopback address the host refuses to start.
func TestRuntimeTestListener(t *testing.T) {
	bin := enginetest.Binary(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--workerd", bin, "--ingress", "off", "--conformance-probe",
		"--runtime-test-listen", addr+"=App.Takoform.localhost")
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: "tok", A2: "tok", B: "tok"}, false)
	if err != nil {
		t.Fatal(err)
	}
	app, err := e.DeployApp(ctx, e.A1, "fetch") // answers "fetch"
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), map[string]any{
		"worker": conformance.Rel("ModuleWorker", app.Worker.Metadata.Name), "hostname": "app.takoform.localhost"}); err != nil {
		t.Fatal(err)
	}
	var status int
	var body []byte
	for range 300 {
		resp, err := http.Get("http://" + addr + "/abi/health")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if status = resp.StatusCode; status == http.StatusOK {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status != http.StatusOK || string(body) != "fetch" {
		t.Errorf("the test listener answered %d %q, want the worker's answer \"fetch\"", status, body)
	}
	for _, args := range [][]string{
		{"--runtime-test-listen", "127.0.0.1:0=ep-0123456789abcdef.workers.takoform.localhost"},
		{"--conformance-probe", "--runtime-test-listen", "0.0.0.0:0=ep-0123456789abcdef.workers.takoform.localhost"},
		{"--conformance-probe", "--runtime-test-listen", "127.0.0.1:0"},
	} {
		var out, errOut bytes.Buffer
		code := cli.Main(append([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t"}, args...), &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), "--runtime-test-listen") || out.Len() != 0 {
			t.Errorf("host serve %q: exit %d, stdout %q, stderr %q; want a refusal naming --runtime-test-listen", args, code, out.String(), errOut.String())
		}
	}
}

// TestServeRefusesABadCustomDomainsFile: a --custom-domains file that is
// missing or has a malformed line stops the host before it serves,
// naming the file and the line.
func TestServeRefusesABadCustomDomainsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "domains")
	if err := os.WriteFile(bad, []byte("tenant-a app.example.com\ntenant-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		bad:                           "--custom-domains " + bad + ": line 2: want \"TENANT HOSTNAME\"",
		filepath.Join(dir, "no-such"): "--custom-domains: open " + filepath.Join(dir, "no-such"),
	} {
		var out, errOut bytes.Buffer
		code := cli.Main([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t", "--ingress", "off", "--custom-domains", file}, &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), want) {
			t.Errorf("--custom-domains %s: exit %d, stderr:\n%s\nwant it to contain %q", file, code, errOut.String(), want)
		}
		if out.Len() != 0 {
			t.Errorf("it started serving: %s", out.String())
		}
	}
}

// TestRuntimeLoaderListen: --runtime-loader-listen under --conformance-probe
// serves the loader adapter (spec/runtime-v1.md §7) on loopback, backed by
// workerd and guarded by the token file; without --conformance-probe or
// off loopback the host refuses to start.
func TestRuntimeLoaderListen(t *testing.T) {
	bin := enginetest.Binary(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	tokenFile := filepath.Join(t.TempDir(), "loader-token")
	if err := os.WriteFile(tokenFile, []byte("loader-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--workerd", bin, "--ingress", "off", "--conformance-probe",
		"--runtime-loader-listen", addr, "--runtime-loader-token-file", tokenFile)
	body := `{"protocol":"takoform.runtime-abi-loader@v1","mainModule":"w.js","declaredHandlers":["fetch"],"modules":[{"name":"w.js","mediaType":"application/javascript+module","contentBase64":"` +
		base64.StdEncoding.EncodeToString([]byte(`const h = {}; h["fe" + "tch"] = () => {}; export default h;`)) + `"}]}`
	send := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		var resp *http.Response
		for range 100 { // the adapter starts listening just after the control plane
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, got := send("loader-secret"); status != http.StatusOK || !strings.Contains(got, `"exportedHandlers":["fetch"]`) {
		t.Errorf("the loader adapter answered %d %q, want 200 with exportedHandlers [fetch]", status, got)
	}
	if status, _ := send("other"); status != http.StatusUnauthorized {
		t.Errorf("a wrong token got %d, want 401", status)
	}
	for _, args := range [][]string{
		{"--runtime-loader-listen", "127.0.0.1:0"},
		{"--conformance-probe", "--runtime-loader-listen", "0.0.0.0:0"},
		{"--conformance-probe", "--runtime-loader-listen", "localhost:0"},
		{"--conformance-probe", "--runtime-loader-token-file", tokenFile},
	} {
		var out, errOut bytes.Buffer
		code := cli.Main(append([]string{"host", "serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "h.db"), "--dev-token", "t"}, args...), &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), "--runtime-loader-") || out.Len() != 0 {
			t.Errorf("host serve %q: exit %d, stdout %q, stderr %q; want a refusal naming the loader flag", args, code, out.String(), errOut.String())
		}
	}
}
