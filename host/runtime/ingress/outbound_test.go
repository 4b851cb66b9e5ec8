package ingress_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestOutboundFetchReachesNoPrivateAddress: a worker's global fetch to a
// loopback address (here a server of the test, which counts what reaches
// it) is refused by the engine's outbound network (spec/runtime-v1.md §4:
// public addresses only), so tenant code cannot reach the host's own
// listeners.
func TestOutboundFetchReachesNoPrivateAddress(t *testing.T) {
	var hits atomic.Int64
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("private"))
	}))
	t.Cleanup(private.Close)
	h, front := startHost(t, enginetest.Binary(t))
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	hostname := deploySource(t, e, []byte(`export default {
  async fetch(request) {
    try {
      const r = await fetch(new URL(request.url).searchParams.get("to"));
      return new Response("reached " + r.status + " " + await r.text());
    } catch (e) {
      return new Response("refused " + e.name);
    }
  },
};
`))
	var body string
	for i := 0; i < 600; i++ {
		var status int
		status, _, body = get(t, front, hostname, "/?to="+private.URL+"/")
		if status == http.StatusOK {
			break
		}
		sleep()
	}
	if !strings.HasPrefix(body, "refused ") || hits.Load() != 0 {
		t.Errorf("fetch of a loopback address answered %q with %d requests reaching it, want it refused and none reaching it", body, hits.Load())
	}
}
