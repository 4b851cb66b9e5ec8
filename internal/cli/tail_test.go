package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/takoform/takoform/internal/cli"
	"github.com/takoform/takoform/internal/servetest"
)

// TestTailRefusals: `takoform tail` without a worker is a usage error
// naming the flags; a worker the tenant does not hold is the host's
// resource_not_found, and nothing is streamed.
func TestTailRefusals(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"tail", "--endpoint", "http://127.0.0.1:1", "--space", "s"}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "--space and --worker") {
		t.Errorf("tail without --worker: exit %d, stderr %q", code, errOut.String())
	}
	h := servetest.Start(t, "--listen", "127.0.0.1:0", "--dev-token", "tok", "--ingress", "off")
	out.Reset()
	errOut.Reset()
	code := cli.Main([]string{"tail", "--endpoint", h.URL, "--token", "tok", "--space", "nowhere", "--worker", "nobody"}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "resource_not_found") || out.Len() != 0 {
		t.Errorf("tail of a missing worker: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
