package cli_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host"
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
