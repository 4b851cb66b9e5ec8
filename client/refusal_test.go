package client

// These tests use httptest servers that answer crafted responses, only to
// exercise the client's own refusals: protocol-invalid answers, refused
// redirects, the retry rule and unknown outcomes. Happy paths are tested
// against the real host.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/wire"
)

// recorder is a crafted server: it records requests and answers with the
// handler for the request's ordinal (0-based).
type recorder struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	n := len(rec.reqs)
	rec.reqs = append(rec.reqs, r)
	rec.bodies = append(rec.bodies, body)
	rec.mu.Unlock()
	rec.answer(n, w, r)
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

func crafted(t *testing.T, opts Options, answer func(n int, w http.ResponseWriter, r *http.Request)) (*Client, *recorder, *httptest.Server) {
	t.Helper()
	rec := &recorder{answer: answer}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	if opts.Token == "" {
		opts.Token = "t0k"
	}
	c, err := newClient(srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec, srv
}

func envelope(code wire.Code, retryable bool) string {
	return fmt.Sprintf(`{"error":{"code":%q,"message":"m","requestId":"req-1","retryable":%v}}`, code, retryable)
}

func reply(status int, header map[string]string, body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestRedirectsAreRefused(t *testing.T) {
	var leaked sync.Map
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.URL.Path, r.Header.Get("Authorization"))
	}))
	defer target.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer origin.Close()

	_, err := New(context.Background(), origin.URL, Options{Token: "secret"})
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "redirect") || pe.Status != http.StatusTemporaryRedirect {
		t.Fatalf("a redirected discovery gave %v; want a *ProtocolError about the redirect", err)
	}
	c, err := newClient(origin.URL, Options{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background(), appAddr); !errors.As(err, &pe) || IsNotFound(err) {
		t.Fatalf("a redirected read gave %v", err)
	}
	leaked.Range(func(k, v any) bool {
		t.Errorf("the redirect was followed to %v (Authorization %q)", k, v)
		return true
	})
}

func TestDiscoveryRefusals(t *testing.T) {
	if _, err := New(context.Background(), "http://host.example", Options{}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("plain http to a public host: %v", err)
	}
	_, rec, srv := crafted(t, Options{}, nil)
	rec.answer = func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Write(discoveryDoc("https://other.example", nil)) // cross-origin api
	}
	_, err := New(context.Background(), srv.URL, Options{Token: "t0k"})
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not the configured endpoint") {
		t.Fatalf("cross-origin discovery: %v", err)
	}
	r := rec.reqs[0]
	if r.Method != http.MethodGet || r.URL.Path != wire.V1alpha3.DiscoveryPath || r.Header.Get("Authorization") != "Bearer t0k" {
		t.Errorf("discovery request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	rec.answer = reply(http.StatusUnauthorized, nil, envelope(wire.Unauthenticated, false))
	var we *wire.Error
	if _, err := New(context.Background(), srv.URL, Options{Token: "t0k"}); !errors.As(err, &we) || we.Code != wire.Unauthenticated {
		t.Fatalf("refused discovery: %v", err)
	}
}

func resourceJSON(mut func(r *wire.Resource)) string {
	r := goodResource()
	if mut != nil {
		mut(r)
	}
	return mustJSON(r)
}

func TestProtocolInvalidAnswersAreNeverAbsence(t *testing.T) {
	good := resourceJSON(nil)
	etag := map[string]string{"ETag": `"4"`}
	cases := []struct {
		name   string
		answer func(int, http.ResponseWriter, *http.Request)
	}{
		{"router 404 without a body", reply(404, nil, "")},
		{"router 404 with text", reply(404, nil, "404 page not found\n")},
		{"empty 200 body", reply(200, etag, "")},
		{"duplicate member", reply(200, etag, `{"kind":"ModuleWorker",`+good[1:])},
		{"unknown member", reply(200, etag, `{"extra":1,`+good[1:])},
		{"not JSON", reply(200, etag, "ok")},
		{"substituted FormRef", reply(200, etag, resourceJSON(func(r *wire.Resource) { r.Form.FormRef.DefinitionVersion = "0.2.0" }))},
		{"other space", reply(200, etag, resourceJSON(func(r *wire.Resource) { r.Metadata.Space = "Prod" }))},
		{"missing ETag", reply(200, nil, good)},
		{"weak ETag", reply(200, map[string]string{"ETag": `W/"4"`}, good)},
		{"stale ETag", reply(200, map[string]string{"ETag": `"3"`}, good)},
		{"201 on a read", reply(201, etag, good)},
		{"204 on a read", reply(204, nil, "")},
		{"retryable internal_error", reply(500, nil, envelope(wire.InternalError, true))},
		{"unknown code", reply(409, nil, envelope("already_exists", false))},
		{"not found on the wrong status", reply(400, nil, envelope(wire.ResourceNotFound, false))},
		{"oversized body", reply(200, etag, `{"pad":"`+strings.Repeat("x", 600)+`"}`)},
	}
	for _, k := range cases {
		c, rec, _ := crafted(t, Options{MaxResponseBytes: 512}, k.answer)
		res, err := c.Read(context.Background(), appAddr)
		var pe *ProtocolError
		if !errors.As(err, &pe) || res != nil {
			t.Errorf("%s: got %v, %v; want a *ProtocolError", k.name, res, err)
		}
		if IsNotFound(err) {
			t.Errorf("%s: read as absence", k.name)
		}
		if rec.count() != 1 {
			t.Errorf("%s: %d requests; a protocol-invalid answer is never retried", k.name, rec.count())
		}
	}
	// Control: a valid resource_not_found 404 is absence; form_unknown is not.
	c, _, _ := crafted(t, Options{}, reply(404, nil, envelope(wire.ResourceNotFound, false)))
	if _, err := c.Read(context.Background(), appAddr); !IsNotFound(err) {
		t.Errorf("valid resource_not_found: %v", err)
	}
	c, _, _ = crafted(t, Options{}, reply(404, nil, envelope(wire.FormUnknown, false)))
	if _, err := c.Read(context.Background(), appAddr); IsNotFound(err) || err == nil {
		t.Errorf("form_unknown read as absence: %v", err)
	}
}

func TestReadSendsTheExactQuery(t *testing.T) {
	c, rec, _ := crafted(t, Options{}, reply(404, nil, envelope(wire.ResourceNotFound, false)))
	c.Read(context.Background(), appAddr)
	r := rec.reqs[0]
	want := "/apis/forms.takoform.com/v1alpha3/resources/edge.forms.takoform.com/v1alpha1/ModuleWorker/app"
	if r.URL.EscapedPath() != want || r.URL.Query().Get("space") != "Prod North" || len(r.URL.Query()) != 5 {
		t.Errorf("read target %s", r.URL.RequestURI())
	}
	if r.Header.Get("Idempotency-Key") != "" || r.Header.Get("Authorization") != "Bearer t0k" {
		t.Errorf("read headers %v", r.Header)
	}
}

func TestDeleteRefusals(t *testing.T) {
	pre := Precondition{Generation: "2", UID: "uid-19", Revision: "4"}
	for name, answer := range map[string]func(int, http.ResponseWriter, *http.Request){
		"200 on a delete":    reply(200, nil, `{}`),
		"202 without op":     reply(202, nil, `{}`),
		"202 pending+result": reply(202, nil, `{"operation":{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_1","done":false,"result":{}}}`),
	} {
		c, rec, _ := crafted(t, Options{}, answer)
		_, err := c.Delete(context.Background(), appAddr, pre)
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.IdempotencyKey == "" {
			t.Errorf("%s: %v; want a *ProtocolError carrying the key", name, err)
			continue
		}
		r := rec.reqs[0]
		if r.Header.Get(wire.HeaderGeneration) != "2" || r.Header.Get("If-Match") != `"4"` || len(rec.bodies[0]) != 0 {
			t.Errorf("%s: delete request headers %v body %q", name, r.Header, rec.bodies[0])
		}
		if k := IdempotencyKey(KeyDelete, workerRef.APIVersion, workerRef.Kind, "app", "Prod North", "uid-19", "2", nil); r.Header.Get("Idempotency-Key") != k || pe.IdempotencyKey != k {
			t.Errorf("%s: key %q, want %q", name, r.Header.Get("Idempotency-Key"), k)
		}
	}
}

// A 204 body never gets through net/http (the server drops it and the
// transport reads none), so the rule is checked on the answer itself.
func TestNonEmpty204IsRefused(t *testing.T) {
	c := offlineClient(t)
	r := &request{op: "delete", method: http.MethodDelete, path: lanePath, mutation: true, key: "takoform-k"}
	var pe *ProtocolError
	if err := c.expectEmpty(r, &response{status: 204, body: []byte(`{"deleted":true}`)}); !errors.As(err, &pe) || pe.IdempotencyKey != "takoform-k" {
		t.Fatalf("non-empty 204: %v", err)
	}
}

func applyRequest() wire.ApplyRequest {
	return wire.ApplyRequest{
		APIVersion: workerRef.APIVersion, Kind: workerRef.Kind, Form: wire.FormReference{FormRef: workerRef},
		Metadata: wire.Metadata{Name: "app", Space: "Prod North"}, Spec: json.RawMessage(`{"main":"x"}`),
		Review: wire.Review{PrepareDigest: "sha256:" + strings.Repeat("e", 64)},
	}
}

func TestRetryOnlyRetryableEnvelopes(t *testing.T) {
	created := resourceJSON(func(r *wire.Resource) {
		r.Metadata.Generation, r.Metadata.Revision, r.Status.ObservedGeneration = "1", "1", "1"
	})
	c, rec, _ := crafted(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(409)
			io.WriteString(w, envelope(wire.ResourceBusy, true))
			return
		}
		w.Header().Set("ETag", `"1"`)
		w.WriteHeader(201)
		io.WriteString(w, created)
	})
	m, err := c.Apply(context.Background(), applyRequest(), Precondition{})
	if err != nil || m.Status != 201 || m.Resource.Metadata.UID != "uid-19" {
		t.Fatalf("apply after two busy answers: %+v, %v", m, err)
	}
	if rec.count() != 3 {
		t.Fatalf("%d attempts, want 3", rec.count())
	}
	want := IdempotencyKey(KeyApply, workerRef.APIVersion, workerRef.Kind, "app", "Prod North", "", "", rec.bodies[0])
	for i, r := range rec.reqs {
		if r.Header.Get("Idempotency-Key") != want || r.Header.Get("If-None-Match") != "*" || string(rec.bodies[i]) != string(rec.bodies[0]) {
			t.Errorf("attempt %d differs: key %q (want %q) body %s", i, r.Header.Get("Idempotency-Key"), want, rec.bodies[i])
		}
	}

	for name, k := range map[string]struct {
		status   int
		body     string
		attempts int
	}{
		"exhausted":                     {503, envelope(wire.BackendUnavailable, true), 3},
		"busy not marked retryable":     {409, envelope(wire.ResourceBusy, false), 1},
		"non-retryable code":            {412, envelope(wire.GenerationConflict, false), 1},
		"internal error is not retried": {500, envelope(wire.InternalError, false), 1},
	} {
		c, rec, _ := crafted(t, Options{Retry: RetryPolicy{Base: time.Millisecond}}, reply(k.status, nil, k.body))
		_, err := c.Apply(context.Background(), applyRequest(), Precondition{})
		var we *wire.Error
		if !errors.As(err, &we) || rec.count() != k.attempts {
			t.Errorf("%s: %v after %d attempts; want a *wire.Error after %d", name, err, rec.count(), k.attempts)
		}
	}

	// A Retry-After that cannot fit the deadline ends the retries at once.
	c, rec, _ = crafted(t, Options{}, reply(429, map[string]string{"Retry-After": "3600"}, envelope(wire.RateLimited, true)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Apply(ctx, applyRequest(), Precondition{})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.RateLimited || rec.count() != 1 {
		t.Errorf("long Retry-After: %v after %d attempts", err, rec.count())
	}
}

// hangUp closes the connection without answering.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	conn.Close()
}

func TestTransportFailureOnAMutationIsNotRetried(t *testing.T) {
	var c *Client
	var rec *recorder
	c, rec, _ = crafted(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(404)
			io.WriteString(w, envelope(wire.ResourceNotFound, false))
			return
		}
		hangUp(t, w)
	})
	ctx := context.Background()
	// Warm a keep-alive connection first: net/http silently re-sends a
	// request it deems replayable when a reused connection fails.
	if _, err := c.Read(ctx, appAddr); !IsNotFound(err) {
		t.Fatal(err)
	}
	_, err := c.Apply(ctx, applyRequest(), Precondition{Generation: "2", UID: "uid-19"})
	var te *TransportError
	if !errors.As(err, &te) || !te.OutcomeUnknown() || !strings.Contains(err.Error(), "outcome is unknown") {
		t.Fatalf("apply with a lost answer: %v; want an unknown-outcome *TransportError", err)
	}
	if rec.count() != 2 {
		t.Fatalf("%d requests reached the server; the mutation must be sent exactly once", rec.count())
	}
	sent := rec.reqs[1].Header.Get("Idempotency-Key")
	want := IdempotencyKey(KeyApply, workerRef.APIVersion, workerRef.Kind, "app", "Prod North", "uid-19", "2", rec.bodies[1])
	if sent != want || te.IdempotencyKey != want || rec.reqs[1].Header.Get(wire.HeaderGeneration) != "2" {
		t.Errorf("key sent %q, reported %q, want %q", sent, te.IdempotencyKey, want)
	}

	_, err = c.Delete(ctx, appAddr, Precondition{Generation: "2", UID: "uid-19"})
	if !errors.As(err, &te) || !te.OutcomeUnknown() || te.IdempotencyKey == "" || rec.count() != 3 {
		t.Fatalf("delete with a lost answer: %v after %d requests", err, rec.count())
	}
}

func TestWaitOperationRefusals(t *testing.T) {
	pending := `{"apiVersion":"operations.takoform.com/v1alpha1","kind":"Operation","id":"op_7","done":false}`
	c, rec, _ := crafted(t, Options{}, reply(200, nil, strings.Replace(pending, "op_7", "op_8", 1)))
	_, err := c.WaitOperation(context.Background(), "op_7")
	var we *OperationWaitError
	var pe *ProtocolError
	if !errors.As(err, &we) || we.ID != "op_7" || !errors.As(err, &pe) || rec.count() != 1 {
		t.Fatalf("another operation's answer: %v", err)
	}

	c, rec, _ = crafted(t, Options{}, reply(200, map[string]string{"Retry-After": "3600"}, pending))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.WaitOperation(ctx, "op_7")
	if !errors.As(err, &we) || we.Last == nil || !errors.Is(err, context.DeadlineExceeded) || rec.count() != 1 {
		t.Fatalf("Retry-After past the deadline: %v after %d polls", err, rec.count())
	}

	c, _, _ = crafted(t, Options{}, reply(404, nil, envelope(wire.ResourceNotFound, false)))
	if _, err := c.WaitOperation(context.Background(), "op_7"); !errors.As(err, &we) || IsNotFound(err) {
		t.Fatalf("a poll answered resource_not_found must not read as absence: %v", err)
	}
}

func TestHeadBlobRefusesOtherStatuses(t *testing.T) {
	c, rec, _ := crafted(t, Options{}, reply(401, nil, ""))
	ok, err := c.HeadBlob(context.Background(), "sha256:"+strings.Repeat("f", 64))
	var pe *ProtocolError
	if ok || !errors.As(err, &pe) || rec.reqs[0].Method != http.MethodHead {
		t.Fatalf("HEAD 401: %v %v", ok, err)
	}
	if p := rec.reqs[0].URL.EscapedPath(); p != lanePath+"/artifacts/blobs/sha256:"+strings.Repeat("f", 64) {
		t.Errorf("HEAD path %s", p)
	}
}
