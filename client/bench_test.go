package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// answerTransport answers every request in process with one canned answer
// per method, so a benchmark through it is the client's own CPU and
// allocations per call (no network, no host).
type answerTransport map[string]struct {
	status int
	etag   string
	body   []byte
}

func (t answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	a := t[r.Method]
	h := http.Header{"Content-Type": {wire.ContentTypeJSON}}
	if a.etag != "" {
		h["Etag"] = []string{a.etag}
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

func benchClient(b *testing.B, t answerTransport) *Client {
	c, err := newClient("http://127.0.0.1:1", Options{Token: "t0k", HTTPClient: &http.Client{Transport: t}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkClientRead is one exact read (Read) of a verified resource.
func BenchmarkClientRead(b *testing.B) {
	c := benchClient(b, answerTransport{http.MethodGet: {200, `"4"`, []byte(resourceJSON(nil))}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Read(context.Background(), appAddr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientCreate is one create as the host benchmarks do it:
// Prepare, then Apply with create intent answered 201.
func BenchmarkClientCreate(b *testing.B) {
	spec := json.RawMessage(`{"main":"x"}`)
	d, _ := ijson.Digest(spec)
	req := wire.ResourceRequest{APIVersion: workerRef.APIVersion, Kind: workerRef.Kind, Form: wire.FormReference{FormRef: workerRef},
		Metadata: wire.Metadata{Name: "app", Space: "Prod North"}, Spec: spec}
	prepared := mustJSON(&wire.PrepareResponse{Resource: req, Review: wire.PrepareReview{PrepareDigest: "sha256:" + strings.Repeat("c", 64), SpecDigest: d}})
	created := resourceJSON(func(r *wire.Resource) {
		r.Metadata.Generation, r.Metadata.Revision, r.Status.ObservedGeneration = "1", "1", "1"
	})
	c := benchClient(b, answerTransport{
		http.MethodPost: {200, "", []byte(prepared)},
		http.MethodPut:  {201, `"1"`, []byte(created)},
	})
	b.ReportAllocs()
	for b.Loop() {
		p, err := c.Prepare(context.Background(), req, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Apply(context.Background(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
			Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, Precondition{}); err != nil {
			b.Fatal(err)
		}
	}
}
