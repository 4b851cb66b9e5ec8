package cli_test

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/servetest"
)

// TestConformanceRuntime runs `takoform conformance runtime` against a
// served host with workerd and its ingress: it deploys the probe, checks
// 6–18 pass (17 waits for the host's next real minute), 1–5 are
// unmeasured, and it exits 0.
func TestConformanceRuntime(t *testing.T) {
	bin := enginetest.Binary(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ingress := free.Addr().String()
	free.Close()
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--workerd", bin, "--ingress", ingress)
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"conformance", "runtime", "--endpoint", h.URL, "--token", "tok", "--ingress", ingress}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "runtime checks: 13 passed, 0 failed, 5 unmeasured") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	t.Log(out.String())
}

func TestConformanceRuntimeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give --endpoint"},
		{[]string{"--endpoint", "http://127.0.0.1:1"}, "--endpoint needs --token"},
		{[]string{"--worker-url", "https://ep.example/?q=1"}, "userinfo, query and fragment are not allowed"},
	} {
		var out, errOut bytes.Buffer
		code := cli.Main(append([]string{"conformance", "runtime"}, c.args...), &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("conformance runtime %q: exit %d, stderr %q; want a refusal saying %q", c.args, code, errOut.String(), c.want)
		}
	}
}
