package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func envelopeOf(t *testing.T, resp *http.Response) wire.ErrorBody {
	t.Helper()
	var env wire.ErrorEnvelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("HTTP %d without an error envelope: %v", resp.StatusCode, err)
	}
	if err := wire.CheckEnvelope(resp.StatusCode, env.Error); err != nil {
		t.Fatal(err)
	}
	return env.Error
}

// TestBodyLimitAndUnknownRoutes: a body over the configured limit is
// refused in the envelope before anything is read into a mutation, and
// unknown paths and methods answer in the envelope too.
func TestBodyLimitAndUnknownRoutes(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{MaxBodyBytes: 1024})
	do := func(method, path string, body []byte) *http.Response {
		req, _ := http.NewRequest(method, h.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	big := []byte(`{"pad":"` + strings.Repeat("x", 2048) + `"}`)
	if e := envelopeOf(t, do(http.MethodPost, wire.V1alpha3.APIBase+"/resources/validate", big)); e.Code != wire.InvalidArgument || e.HostCode != "body_too_large" {
		t.Fatalf("oversized body: %+v", e)
	}
	blob := do(http.MethodPut, wire.V1alpha3.APIBase+"/artifacts/uploads/up_unknown/blobs/sha256:"+strings.Repeat("0", 64), big)
	if e := envelopeOf(t, blob); e.Code != wire.ArtifactMissing {
		t.Fatalf("a blob larger than the JSON body limit is judged on its own terms: %+v", e)
	}
	for _, c := range [][2]string{{http.MethodGet, wire.V1alpha3.APIBase + "//forms"}, {http.MethodGet, wire.V1alpha3.APIBase + "/resources/./validate"}, {http.MethodGet, "/nope"}, {http.MethodPatch, wire.V1alpha3.APIBase + "/resources/validate"}, {http.MethodGet, wire.V1alpha3.APIBase + "/resources/a/b"}} {
		if e := envelopeOf(t, do(c[0], c[1], nil)); e.Code != wire.ResourceNotFound {
			t.Fatalf("%s %s: %+v", c[0], c[1], e)
		}
	}
}

// TestIdempotencyRecordsExpireByAge: a replay record older than the
// configured TTL is dropped, and the same key then executes anew.
func TestIdempotencyRecordsExpireByAge(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	h := hosttest.Start(t, hosttest.Options{IdempotencyTTL: time.Hour, Now: now})
	ctx := context.Background()
	c, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	first := put(t, h, c, kvRequest(t, c, "aged"), "key-aged", "")
	if first.status != 201 {
		t.Fatalf("create: %d %s", first.status, first.body)
	}
	if again := send(t, h, kvRequest(t, c, "aged"), first.sent, "key-aged", ""); again.status != 201 || !bytes.Equal(again.body, first.body) {
		t.Fatalf("replay within the TTL: %d", again.status)
	}
	offset.Store(int64(2 * time.Hour))
	deadline := time.Now().Add(10 * time.Second)
	for {
		again := send(t, h, kvRequest(t, c, "aged"), first.sent, "key-aged", "")
		if again.status == 412 { // executed anew: the name is taken
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the record still replays after its TTL: %d %s", again.status, again.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMalformedRequestsAreNamed: a broken query string and a repeated
// Idempotency-Key are refused in the envelope, saying which.
func TestMalformedRequestsAreNamed(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	req, _ := http.NewRequest(http.MethodGet, h.URL+wire.V1alpha3.APIBase+"/resources/edge.forms.takoform.com/v1alpha1/EdgeKVNamespace/x?space=%zz", nil)
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if e := envelopeOf(t, resp); e.Code != wire.InvalidArgument || e.HostCode != "query_encoding" {
		t.Fatalf("broken query: %+v", e)
	}
	del, _ := http.NewRequest(http.MethodDelete, h.URL+wire.V1alpha3.APIBase+"/resources/edge.forms.takoform.com/v1alpha1/EdgeKVNamespace/x", nil)
	del.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	del.Header.Add(wire.HeaderIdempotency, "k1")
	del.Header.Add(wire.HeaderIdempotency, "k2")
	resp2, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if e := envelopeOf(t, resp2); e.Code != wire.InvalidArgument || !strings.Contains(e.Message, "exactly one Idempotency-Key") {
		t.Fatalf("two keys: %+v", e)
	}
}
