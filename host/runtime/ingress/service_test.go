package ingress_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func peerSource(label string) []byte {
	return []byte(`export default {
  async fetch(request, env, ctx) {
    return Response.json({ peer: "` + label + `", url: request.url, method: request.method, body: await request.text() });
  },
};
`)
}

const callerSource = `export default {
  async fetch(request, env, ctx) {
    const r = await env.PEER.fetch("https://anything.invalid/abi/echo?x=1", { method: "POST", body: "ping" });
    return Response.json({ members: Object.keys(env.PEER), status: r.status, peer: await r.json() });
  },
};
`

// TestServiceBindingCallsTheTargetsDeployment: a service binding reaches
// the target worker's active deployment through its entry (its own env),
// with the caller's URL, method and body; env.PEER has only fetch; a
// rollout of the target moves the calls (spec/runtime-v1.md §5.5).
func TestServiceBindingCallsTheTargetsDeployment(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnv(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	create := func(kind, prefix string, spec any) *wire.Resource {
		t.Helper()
		r, err := e.Create(ctx, e.A1, kind, e.Name(prefix), spec)
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		return r
	}
	version := func(workerRel map[string]any, source []byte, extra map[string]any) *wire.Resource {
		digest, err := e.UploadBundle(ctx, e.A1, source)
		if err != nil {
			t.Fatal(err)
		}
		bundle := create("WorkerBundle", "bundle", map[string]any{"manifestDigest": digest})
		spec := map[string]any{"worker": workerRel, "bundle": conformance.Rel("WorkerBundle", bundle.Metadata.Name), "handlers": []any{"fetch"}}
		for k, v := range extra {
			spec[k] = v
		}
		return create("WorkerVersion", "version", spec)
	}
	weights := func(workerRel map[string]any, v *wire.Resource) map[string]any {
		return map[string]any{"worker": workerRel, "versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", v.Metadata.Name)}}}
	}
	peer := create("ModuleWorker", "peer", map[string]any{})
	peerRel := conformance.Rel("ModuleWorker", peer.Metadata.Name)
	peerDeploy := create("WorkerDeployment", "deploy", weights(peerRel, version(peerRel, peerSource("peer-one"), nil)))
	caller := create("ModuleWorker", "caller", map[string]any{})
	callerRel := conformance.Rel("ModuleWorker", caller.Metadata.Name)
	cv := version(callerRel, []byte(callerSource), map[string]any{"serviceBindings": []any{map[string]any{"name": "PEER", "resource": peerRel}}})
	create("WorkerDeployment", "deploy", weights(callerRel, cv))
	endpoint := create("WorkerEndpoint", "endpoint", map[string]any{"worker": callerRel})
	var outputs struct{ Hostname string }
	if err := json.Unmarshal(endpoint.Status.Outputs, &outputs); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Members []string
		Status  int
		Peer    struct{ Peer, URL, Method, Body string }
	}
	until := func(label string) answer {
		t.Helper()
		var a answer
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			status, _, body := get(t, front, outputs.Hostname, "/")
			if status == http.StatusOK {
				a = answer{}
				if err := json.Unmarshal([]byte(body), &a); err != nil {
					t.Fatalf("caller answered %q", body)
				}
				if a.Peer.Peer == label {
					return a
				}
			}
			sleep()
		}
		t.Fatalf("the caller never reached %s; last %+v", label, a)
		return a
	}
	a := until("peer-one")
	if strings.Join(a.Members, ",") != "fetch" || a.Status != 200 || a.Peer.URL != "https://anything.invalid/abi/echo?x=1" || a.Peer.Method != "POST" || a.Peer.Body != "ping" {
		t.Errorf("service call: %+v, want env.PEER with only fetch, and the peer seeing the caller's URL, method and body", a)
	}
	if _, err := e.Update(ctx, e.A1, peerDeploy, weights(peerRel, version(peerRel, peerSource("peer-two"), nil))); err != nil {
		t.Fatal(err)
	}
	until("peer-two")
}
