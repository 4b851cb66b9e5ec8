package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "discovery-exact", Group: "discovery", Summary: "discovery names exactly the lane checked (v1alpha3 or v1beta1), its features and same-origin endpoints", Run: discoveryExact},
		Check{ID: "unauthenticated-request-refused", Group: "discovery", Summary: "no or unknown credential is unauthenticated on read and mutating surfaces", Run: unauthenticatedRefused},
		Check{ID: "error-envelope-taxonomy", Group: "discovery", Summary: "refusals are closed envelopes with the code's fixed status", Run: errorEnvelopeTaxonomy},
		Check{ID: "namespaced-group-travels-as-two-path-segments", Group: "discovery", Summary: "a group travels as two segments; an encoded slash addresses nothing", Run: groupTwoSegments},
	)
}

func discoveryExact(ctx context.Context, e *Env) error {
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, e.Lane.DiscoveryPath, nil, nil)
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("discovery answered HTTP %d", r.Status)
	}
	var d wire.Discovery
	if err := json.Unmarshal(r.Body, &d); err != nil {
		return err
	}
	if len(d.APIVersions) != 1 || d.APIVersions[0] != e.Lane.Name {
		return fmt.Errorf("api_versions = %v", d.APIVersions)
	}
	for _, f := range wire.RequiredFeatures {
		if !d.Features[f] {
			return fmt.Errorf("feature %s is not advertised true", f)
		}
	}
	if d.Endpoints.API != e.Endpoint+e.Lane.APIBase {
		return fmt.Errorf("endpoints.api = %q, want %q", d.Endpoints.API, e.Endpoint+e.Lane.APIBase)
	}
	if got := e.A1.Discovery(); got.Endpoints.API != d.Endpoints.API {
		return fmt.Errorf("the client negotiated %q", got.Endpoints.API)
	}
	return nil
}

func unauthenticatedRefused(ctx context.Context, e *Env) error {
	ref, err := e.Ref("EdgeKVNamespace")
	if err != nil {
		return err
	}
	read := ResourcePath(ref, "absent", "") + ExactQuery(e.Space, ref)
	for _, token := range []string{"", "not-a-token-anyone-holds"} {
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, read},
			{http.MethodPut, ResourcePath(ref, "absent", "")},
			{http.MethodDelete, read},
		} {
			r, err := e.Do(ctx, token, c.method, c.path, map[string]string{wire.HeaderIdempotency: "k-" + randomHex(4), "If-None-Match": "*"}, []byte(`{}`))
			if err != nil {
				return err
			}
			if err := r.ExpectCode(wire.Unauthenticated); err != nil {
				return fmt.Errorf("%s %s with token %q: %w", c.method, c.path, token, err)
			}
		}
	}
	return nil
}

func errorEnvelopeTaxonomy(ctx context.Context, e *Env) error {
	ref, err := e.Ref("EdgeKVNamespace")
	if err != nil {
		return err
	}
	cases := []struct {
		method, path string
		body         []byte
		code         wire.Code
	}{
		{http.MethodGet, "/no-such-route", nil, wire.ResourceNotFound},
		{http.MethodPost, "/resources/validate", []byte(`{"apiVersion":1}`), wire.InvalidArgument},
		{http.MethodPost, "/resources/validate", []byte(`{"a":1,"a":2}`), wire.InvalidArgument},
		{http.MethodGet, ResourcePath(ref, "absent", "") + ExactQuery(e.Space, ref), nil, wire.ResourceNotFound},
		{http.MethodGet, "/operations/op_absent", nil, wire.OperationNotFound},
	}
	for _, c := range cases {
		r, err := e.Do(ctx, e.Creds.A1, c.method, c.path, nil, c.body)
		if err != nil {
			return err
		}
		if err := r.ExpectCode(c.code); err != nil {
			return fmt.Errorf("%s %s: %w", c.method, c.path, err)
		}
	}
	if !e.Probe {
		return nil
	}
	// The probe's error:<code> on GET {api}/forms without a query answers
	// every code's exact envelope (spec/conformance-probe.md §1).
	for code := range wire.Taxonomy {
		r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, "/forms", map[string]string{wire.HeaderProbe: "error:" + string(code)}, nil)
		if err != nil {
			return err
		}
		if err := r.ExpectCode(code); err != nil {
			return fmt.Errorf("the probe error:%s on GET /forms: %w", code, err)
		}
		if body, _ := r.Envelope(); body.RequestID == "" {
			return fmt.Errorf("the probe error:%s answered no requestId", code)
		}
	}
	return nil
}

func groupTwoSegments(ctx context.Context, e *Env) error {
	ref, err := e.Ref("EdgeKVNamespace")
	if err != nil {
		return err
	}
	name := e.Name("kv")
	if _, err := e.Create(ctx, e.A1, "EdgeKVNamespace", name, map[string]any{}); err != nil {
		return err
	}
	ok, err := e.Do(ctx, e.Creds.A1, http.MethodGet, ResourcePath(ref, name, "")+ExactQuery(e.Space, ref), nil, nil)
	if err != nil {
		return err
	}
	if ok.Status != 200 {
		return fmt.Errorf("the two-segment path answered HTTP %d", ok.Status)
	}
	encoded := "/resources/" + strings.Replace(ref.APIVersion, "/", "%2F", 1) + "/" + ref.Kind + "/" + name + ExactQuery(e.Space, ref)
	r, err := e.Do(ctx, e.Creds.A1, http.MethodGet, encoded, nil, nil)
	if err != nil {
		return err
	}
	return r.ExpectCode(wire.ResourceNotFound)
}
