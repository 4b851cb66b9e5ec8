package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func kvRequest(t testing.TB, c *client.Client, name string) wire.ResourceRequest {
	profiles, err := c.SupportForms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		if p.FormRef != nil && p.FormRef.Kind == "EdgeKVNamespace" {
			return wire.ResourceRequest{APIVersion: p.FormRef.APIVersion, Kind: p.FormRef.Kind, Form: wire.FormReference{FormRef: *p.FormRef},
				Metadata: wire.Metadata{Name: name, Space: "restart"}, Spec: json.RawMessage(`{}`)}
		}
	}
	t.Fatal("no EdgeKVNamespace")
	return wire.ResourceRequest{}
}

type rawAnswer struct {
	status int
	etag   string
	body   []byte
	sent   []byte
}

func put(t *testing.T, h *hosttest.Host, c *client.Client, req wire.ResourceRequest, key string, probe string) rawAnswer {
	p, err := c.Prepare(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}})
	return send(t, h, req, body, key, probe)
}

func send(t *testing.T, h *hosttest.Host, req wire.ResourceRequest, body []byte, key, probe string) rawAnswer {
	a, err := sendCtx(context.Background(), h, req, body, key, probe)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sendCtx is send under ctx, returning the transport's error (a deadline
// passed before the answer) instead of failing the test.
func sendCtx(ctx context.Context, h *hosttest.Host, req wire.ResourceRequest, body []byte, key, probe string) (rawAnswer, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPut, h.URL+laneBase(req.APIVersion)+"/resources/"+req.APIVersion+"/"+req.Kind+"/"+req.Metadata.Name, bytes.NewReader(body))
	if err != nil {
		return rawAnswer{}, err
	}
	r.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	r.Header.Set("If-None-Match", "*")
	r.Header.Set(wire.HeaderIdempotency, key)
	if probe != "" {
		r.Header.Set(wire.HeaderProbe, probe)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return rawAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return rawAnswer{resp.StatusCode, resp.Header.Get("ETag"), b, body}, err
}

// TestRestartKeepsEverythingAcknowledged restarts the host on the same
// file and finds every acknowledged resource, operation record and
// idempotency record as it was.
func TestRestartKeepsEverythingAcknowledged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	h := hosttest.Start(t, hosttest.Options{Path: path, Probe: true})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	first := put(t, h, c, kvRequest(t, c, "kept"), "key-kept", "")
	if first.status != 201 {
		t.Fatalf("create: %d %s", first.status, first.body)
	}
	accepted := put(t, h, c, kvRequest(t, c, "async"), "key-async", "async")
	if accepted.status != 202 {
		t.Fatalf("async create: %d %s", accepted.status, accepted.body)
	}
	var env wire.OperationEnvelope
	if err := json.Unmarshal(accepted.body, &env); err != nil {
		t.Fatal(err)
	}
	done, err := c.WaitOperation(ctx, env.Operation.ID)
	if err != nil || !done.Done {
		t.Fatalf("operation: %v %+v", err, done)
	}
	opDoc, _ := json.Marshal(done)
	h.Stop()

	h2 := hosttest.Start(t, hosttest.Options{Path: path, Probe: true})
	c2, err := client.New(ctx, h2.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	var created wire.Resource
	_ = json.Unmarshal(first.body, &created)
	res, err := c2.Read(ctx, client.Address{Space: "restart", Ref: created.Form.FormRef, Name: "kept"})
	if err != nil || res.Metadata.UID != created.Metadata.UID {
		t.Fatalf("resource after restart: %v %+v", err, res)
	}
	again, err := c2.Operation(ctx, env.Operation.ID)
	if err != nil {
		t.Fatalf("operation record after restart: %v", err)
	}
	if b, _ := json.Marshal(again); !bytes.Equal(b, opDoc) {
		t.Fatalf("operation after restart:\n%s\nbefore:\n%s", b, opDoc)
	}
	replay := send(t, h2, kvRequest(t, c2, "kept"), first.sent, "key-kept", "")
	if replay.status != first.status || replay.etag != first.etag || !bytes.Equal(replay.body, first.body) {
		t.Fatalf("idempotent replay after restart differs:\n%d %s %s\nfirst:\n%d %s %s", replay.status, replay.etag, replay.body, first.status, first.etag, first.body)
	}
}

// laneBase is the API base of the lane that answers Forms of group: the
// lane its Edge group is bound to, else v1alpha3 (spec/lane-v1beta1.md
// §2.5 rule 1).
func laneBase(group string) string {
	for _, ln := range wire.Lanes {
		if ln.EdgeGroup == group {
			return ln.APIBase
		}
	}
	return wire.V1alpha3.APIBase
}
