package replicatest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/replicatest"
	"github.com/takoform/takoform/wire"
)

// fixture is a cluster with a conformance environment (the three test
// credentials, one shared space) through the proxy and through each
// replica directly.
type fixture struct {
	c      *replicatest.Cluster
	proxy  *conformance.Env
	direct []*conformance.Env
}

func newFixture(t *testing.T, n int, o replicatest.Options) *fixture {
	t.Helper()
	c := cluster(t, n, o)
	f := &fixture{c: c, proxy: newEnv(t, c.URL, "")}
	for _, r := range c.Replicas {
		f.direct = append(f.direct, newEnv(t, r.URL, f.proxy.Space))
	}
	return f
}

// replica returns the environment speaking to replica i directly (replica
// 0 when the cluster has only one, as the SQLite debug mode has).
func (f *fixture) replica(i int) *conformance.Env { return f.direct[i%len(f.direct)] }

func newEnv(t *testing.T, endpoint, space string) *conformance.Env {
	t.Helper()
	e, err := conformance.NewEnv(context.Background(), endpoint, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, true)
	if err != nil {
		t.Fatal(err)
	}
	if space != "" {
		e.Space = space
	}
	return e
}

func ref(t testing.TB, e *conformance.Env, kind string) form.FormRef {
	t.Helper()
	r, err := e.Ref(kind)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "replicatest-" + hex.EncodeToString(b[:])
}

// prepared prepares req through e (a create when cur is nil, else fenced
// on cur's generation) and returns the apply body bytes.
func prepared(ctx context.Context, e *conformance.Env, req wire.ResourceRequest, cur *wire.Resource) ([]byte, error) {
	gen := ""
	if cur != nil {
		gen = cur.Metadata.Generation
	}
	p, err := e.A1.Prepare(ctx, req, gen)
	if err != nil {
		return nil, err
	}
	ar := wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}
	if cur != nil {
		ar.ExpectedUID, ar.ExpectedGeneration = cur.Metadata.UID, cur.Metadata.Generation
	}
	return json.Marshal(ar)
}

func resourcePath(ref form.FormRef, name string) string {
	return "/resources/" + ref.APIVersion + "/" + ref.Kind + "/" + url.PathEscape(name)
}

func exactQuery(space string, ref form.FormRef) string {
	return "?space=" + url.QueryEscape(space) + "&group=" + url.QueryEscape(ref.APIVersion) + "&kind=" + url.QueryEscape(ref.Kind) +
		"&definitionVersion=" + url.QueryEscape(ref.DefinitionVersion) + "&schemaDigest=" + url.QueryEscape(ref.SchemaDigest)
}

// putApply sends an apply body raw through e under key: a create (If-None-Match)
// when gen is "", else fenced on gen. probe, when set, is the probe directive.
func putApply(ctx context.Context, e *conformance.Env, req wire.ResourceRequest, body []byte, key, gen, probe string) (*conformance.Raw, error) {
	h := map[string]string{wire.HeaderIdempotency: key}
	if gen == "" {
		h["If-None-Match"] = "*"
	} else {
		h["Takoform-Expected-Generation"] = gen
	}
	if probe != "" {
		h[wire.HeaderProbe] = probe
	}
	return e.Do(ctx, e.Creds.A1, "PUT", resourcePath(req.Form.FormRef, req.Metadata.Name), h, body)
}

// deleteRaw sends a fenced delete of name raw through e under key.
func deleteRaw(ctx context.Context, e *conformance.Env, space string, ref form.FormRef, name, gen, key string) (*conformance.Raw, error) {
	return e.Do(ctx, e.Creds.A1, "DELETE", resourcePath(ref, name)+exactQuery(space, ref),
		map[string]string{wire.HeaderIdempotency: key, "Takoform-Expected-Generation": gen}, nil)
}

// decodeResource reads a 200/201 answer's resource.
func decodeResource(raw *conformance.Raw) (*wire.Resource, error) {
	var res wire.Resource
	if err := json.Unmarshal(raw.Body, &res); err != nil || res.Metadata.UID == "" {
		return nil, fmt.Errorf("HTTP %d is not a resource: %s", raw.Status, raw.Body)
	}
	return &res, nil
}

// refusal decodes an error answer's code ("" when it is no envelope).
func refusal(raw *conformance.Raw) wire.Code {
	body, err := raw.Envelope()
	if err != nil {
		return ""
	}
	return body.Code
}

func read(ctx context.Context, e *conformance.Env, space string, ref form.FormRef, name string) (*wire.Resource, error) {
	return e.A1.Read(ctx, client.Address{Space: space, Ref: ref, Name: name})
}

func queueSpec(retention int) map[string]any {
	return map[string]any{"messageRetentionSeconds": retention}
}
