package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

type probeAnswer struct {
	status int
	header http.Header
	body   []byte
}

func probeDo(t *testing.T, h *hosttest.Host, method, path, token string, headers map[string]string, body []byte) probeAnswer {
	t.Helper()
	r, err := http.NewRequest(method, h.URL+wire.V1alpha3.APIBase+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return probeAnswer{resp.StatusCode, resp.Header, b}
}

// TestProbeErrorOnForms: `error:<code>` on GET {api}/forms with no query
// answers exactly that code's envelope, after authentication; with a
// query string, or on a host without the probe, the route answers.
func TestProbeErrorOnForms(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Probe: true})
	for code, info := range wire.Taxonomy {
		a := probeDo(t, h, http.MethodGet, "/forms", hosttest.TokenA1, map[string]string{wire.HeaderProbe: "error:" + string(code)}, nil)
		var env map[string]map[string]any
		if err := json.Unmarshal(a.body, &env); err != nil || len(env) != 1 {
			t.Fatalf("%s: not an envelope: %s", code, a.body)
		}
		e := env["error"]
		if a.status != info.Status || e["code"] != string(code) || e["retryable"] != info.Retryable || e["message"] == "" || e["requestId"] == "" {
			t.Fatalf("%s: HTTP %d %s", code, a.status, a.body)
		}
		for k := range e {
			switch k {
			case "code", "message", "requestId", "retryable", "hostCode", "details":
			default:
				t.Fatalf("%s: member %q", code, k)
			}
		}
	}
	if a := probeDo(t, h, http.MethodGet, "/forms", "", map[string]string{wire.HeaderProbe: "error:internal_error"}, nil); a.status != 401 {
		t.Fatalf("without credentials the probe answered HTTP %d, want 401", a.status)
	}
	if a := probeDo(t, h, http.MethodGet, "/forms", "wrong", map[string]string{wire.HeaderProbe: "error:internal_error"}, nil); a.status != 401 {
		t.Fatalf("with a bad token the probe answered HTTP %d, want 401", a.status)
	}
	if a := probeDo(t, h, http.MethodGet, "/forms?space=x", hosttest.TokenA1, map[string]string{wire.HeaderProbe: "error:internal_error"}, nil); a.status != 400 {
		t.Fatalf("with a query string the route must answer (invalid_argument for an incomplete query), got HTTP %d %s", a.status, a.body)
	}
	off := hosttest.Start(t, hosttest.Options{})
	if a := probeDo(t, off, http.MethodGet, "/forms", hosttest.TokenA1, map[string]string{wire.HeaderProbe: "error:internal_error"}, nil); a.status != 400 {
		t.Fatalf("a host without the probe honoured it: HTTP %d %s", a.status, a.body)
	}
}

// TestProbeAsyncIsCommittedByPolls: a probe-forced create answers 202 and
// stays uncommitted however long nobody polls; the first poll answers
// pending with Retry-After, the second commits; terminal re-reads are
// byte-identical.
func TestProbeAsyncIsCommittedByPolls(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Probe: true})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, c, "polled")
	a := put(t, h, c, req, "k-polled", "async")
	if a.status != 202 {
		t.Fatalf("HTTP %d %s", a.status, a.body)
	}
	var env wire.OperationEnvelope
	if err := json.Unmarshal(a.body, &env); err != nil || env.Operation.Done {
		t.Fatalf("%s", a.body)
	}
	// Many unrelated requests later, nothing has committed.
	addr := client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: req.Metadata.Name}
	for i := 0; i < 20; i++ {
		if _, err := c.Read(context.Background(), addr); err == nil {
			t.Fatal("the create committed without a poll")
		}
	}
	first := probeDo(t, h, http.MethodGet, "/operations/"+env.Operation.ID, hosttest.TokenA1, nil, nil)
	if first.header.Get("Retry-After") == "" || !bytes.Contains(first.body, []byte(`"done":false`)) {
		t.Fatalf("first poll: %s (Retry-After %q)", first.body, first.header.Get("Retry-After"))
	}
	if _, err := c.Read(context.Background(), addr); err == nil {
		t.Fatal("the first poll committed")
	}
	second := probeDo(t, h, http.MethodGet, "/operations/"+env.Operation.ID, hosttest.TokenA1, nil, nil)
	if !bytes.Contains(second.body, []byte(`"done":true`)) || !bytes.Contains(second.body, []byte(`"result":{"resource"`)) {
		t.Fatalf("second poll: %s", second.body)
	}
	if _, err := c.Read(context.Background(), addr); err != nil {
		t.Fatalf("committed by the second poll, yet: %v", err)
	}
	if again := probeDo(t, h, http.MethodGet, "/operations/"+env.Operation.ID, hosttest.TokenA1, nil, nil); !bytes.Equal(again.body, second.body) {
		t.Fatalf("terminal re-read differs:\n%s\n%s", second.body, again.body)
	}
}

// TestProbeTouchStatus moves the revision only.
func TestProbeTouchStatus(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Probe: true})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	res := create(t, c, kvRequest(t, c, "touched"))
	q := "?" + url.Values{"space": {res.Metadata.Space}, "group": {res.Form.FormRef.APIVersion}, "kind": {res.Kind},
		"definitionVersion": {res.Form.FormRef.DefinitionVersion}, "schemaDigest": {res.Form.FormRef.SchemaDigest}}.Encode()
	a := probeDo(t, h, http.MethodPost, "/resources/"+res.Form.FormRef.APIVersion+"/"+res.Kind+"/"+res.Metadata.Name+"/observe"+q, hosttest.TokenA1,
		map[string]string{wire.HeaderProbe: "touch-status", wire.HeaderIdempotency: "touch-1", wire.HeaderGeneration: res.Metadata.Generation}, nil)
	var got wire.ResourceEnvelope
	if err := json.Unmarshal(a.body, &got); err != nil || a.status != 200 {
		t.Fatalf("HTTP %d %s", a.status, a.body)
	}
	if got.Resource.Metadata.Revision != "2" || got.Resource.Metadata.Generation != "1" || a.header.Get("ETag") != `"2"` {
		t.Fatalf("revision %s generation %s ETag %s, want 2, 1, \"2\"", got.Resource.Metadata.Revision, got.Resource.Metadata.Generation, a.header.Get("ETag"))
	}
}

// TestAsyncDeleteOfARecreatedNameEndsUIDMismatch: an async delete accepted
// for one incarnation, whose name is re-created (under another definition
// version) after the first vanished out of band, ends uid_mismatch and
// leaves the new incarnation alone (spec/conformance-probe.md §2).
func TestAsyncDeleteOfARecreatedNameEndsUIDMismatch(t *testing.T) {
	cat, err := host.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := host.LoadCatalog(os.DirFS("../conformance/testdata/forms/edge-kv-namespace-0.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	if cat, err = cat.AddForm(extra.Forms()[0].Definition, ""); err != nil {
		t.Fatal(err)
	}
	h := hosttest.Start(t, hosttest.Options{Probe: true, Catalog: cat})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	first := create(t, c, kvRequest(t, c, "reborn"))
	path := "/resources/" + first.Form.FormRef.APIVersion + "/" + first.Kind + "/" + first.Metadata.Name + "?" + url.Values{"space": {first.Metadata.Space}, "group": {first.Form.FormRef.APIVersion},
		"kind": {first.Kind}, "definitionVersion": {first.Form.FormRef.DefinitionVersion}, "schemaDigest": {first.Form.FormRef.SchemaDigest}}.Encode()
	del := probeDo(t, h, http.MethodDelete, path, hosttest.TokenA1, map[string]string{wire.HeaderProbe: "async", wire.HeaderIdempotency: "d1", wire.HeaderGeneration: "1"}, nil)
	var env wire.OperationEnvelope
	if err := json.Unmarshal(del.body, &env); err != nil || del.status != 202 {
		t.Fatalf("async delete: HTTP %d %s", del.status, del.body)
	}
	if lost := probeDo(t, h, http.MethodDelete, path, hosttest.TokenA1, map[string]string{wire.HeaderProbe: "external-change", wire.HeaderIdempotency: "d2", wire.HeaderGeneration: "1"}, nil); lost.status != 204 {
		t.Fatalf("external-change delete: HTTP %d %s", lost.status, lost.body)
	}
	other := extra.Forms()[0].Definition.Ref()
	req := wire.ResourceRequest{APIVersion: other.APIVersion, Kind: other.Kind, Form: wire.FormReference{FormRef: other},
		Metadata: wire.Metadata{Name: "reborn", Space: first.Metadata.Space}, Spec: json.RawMessage(`{}`)}
	second := create(t, c, req)
	var doc wire.Operation
	for i := 0; i < 4 && !doc.Done; i++ {
		a := probeDo(t, h, http.MethodGet, "/operations/"+env.Operation.ID, hosttest.TokenA1, nil, nil)
		if err := json.Unmarshal(a.body, &doc); err != nil {
			t.Fatal(err)
		}
	}
	if !doc.Done || doc.Error == nil || doc.Error.Code != wire.UIDMismatch {
		t.Fatalf("the async delete ended %+v, want uid_mismatch", doc)
	}
	now, err := c.Read(context.Background(), client.Address{Space: second.Metadata.Space, Ref: other, Name: "reborn"})
	if err != nil || now.Metadata.UID != second.Metadata.UID {
		t.Fatalf("the re-created incarnation was touched: %v", err)
	}
}

func create(t *testing.T, c *client.Client, req wire.ResourceRequest) *wire.Resource {
	t.Helper()
	p, err := c.Prepare(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ApplyAndWait(context.Background(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
