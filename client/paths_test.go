package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

var workerRef = form.FormRef{
	APIVersion:        "edge.forms.takoform.com/v1alpha1",
	Kind:              "ModuleWorker",
	DefinitionVersion: "0.1.0",
	SchemaDigest:      "sha256:cea859e4a2c295dea985e0b26bbc70309d296e210b805facf4b5592e5f635616",
}

func TestResourcePathIsTwoGroupSegments(t *testing.T) {
	for suffix, want := range map[string]string{
		"":         "/apis/forms.takoform.com/v1alpha3/resources/edge.forms.takoform.com/v1alpha1/ModuleWorker/app",
		"/import":  "/apis/forms.takoform.com/v1alpha3/resources/edge.forms.takoform.com/v1alpha1/ModuleWorker/app/import",
		"/observe": "/apis/forms.takoform.com/v1alpha3/resources/edge.forms.takoform.com/v1alpha1/ModuleWorker/app/observe",
	} {
		got, err := (&Client{lane: wire.V1alpha3}).resourcePath(workerRef, "app", suffix)
		if err != nil || got != want {
			t.Errorf("resourcePath(%q) = %q, %v; want %q", suffix, got, err, want)
		}
		// The escaped form survives URL parsing unchanged: no %2F anywhere.
		u, err := url.Parse("https://host.example" + got)
		if err != nil || u.EscapedPath() != want || strings.Contains(strings.ToUpper(got), "%2F") {
			t.Errorf("path %q does not round-trip: %v %q", got, err, u.EscapedPath())
		}
	}
	g, err := groupPath("forms.example.com/v1beta2")
	if err != nil || g != "forms.example.com/v1beta2" {
		t.Errorf("groupPath = %q, %v", g, err)
	}
}

func TestSegmentRefusesSlashes(t *testing.T) {
	for _, s := range []string{"a/b", "/", "", ".", ".."} {
		if got, err := segment("x", s); err == nil {
			t.Errorf("segment(%q) = %q; want a refusal", s, got)
		}
	}
	for in, want := range map[string]string{"app": "app", "a b": "a%20b", "sha256:ab": "sha256:ab", "1.0.0+build": "1.0.0+build", "é": "%C3%A9"} {
		if got, err := segment("x", in); err != nil || got != want {
			t.Errorf("segment(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// A group that would need a slash inside one segment is refused.
	for _, av := range []string{"edge.forms.takoform.com/v1/x", "edge.forms.takoform.com", "forms.takoform.com/v1alpha2"} {
		if _, err := groupPath(av); err == nil {
			t.Errorf("groupPath(%q) accepted", av)
		}
	}
	if _, err := joinSegments([2]string{"name", "a/b"}); err == nil {
		t.Error("a '/' in a support name was accepted")
	}
}

func TestExactQuery(t *testing.T) {
	for _, space := range []string{"prod", "Prod North", "a+b&c=d", "東京\u3000本番", "x%2Fy", "semi;colon?"} {
		q := exactQuery(space, workerRef)
		if strings.Contains(q, "+") {
			t.Errorf("query %q encodes with '+', which some decoders read as a space", q)
		}
		keys := []string{}
		for _, kv := range strings.Split(q, "&") {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
		}
		if strings.Join(keys, ",") != "space,group,kind,definitionVersion,schemaDigest" {
			t.Errorf("query keys %v", keys)
		}
		v, err := url.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"space": space, "group": workerRef.APIVersion, "kind": workerRef.Kind,
			"definitionVersion": workerRef.DefinitionVersion, "schemaDigest": workerRef.SchemaDigest}
		if len(v) != len(want) {
			t.Errorf("query %q has keys %v", q, v)
		}
		for k, w := range want {
			if len(v[k]) != 1 || v[k][0] != w {
				t.Errorf("query %q: %s = %q, want exactly once %q", q, k, v[k], w)
			}
		}
	}
}

// refuseTransport fails the test if any request reaches the network.
type refuseTransport struct{ t *testing.T }

func (rt refuseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.t.Errorf("unexpected HTTP call %s %s", r.Method, r.URL)
	return nil, errors.New("no network in this test")
}

func TestIdentityIsValidatedBeforeAnyCall(t *testing.T) {
	c, err := newClient("https://host.example", Options{HTTPClient: &http.Client{Transport: refuseTransport{t}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pre := Precondition{Generation: "1", UID: "uid-1"}
	for _, space := range []string{" prod", "prod ", "a/b", "", "tab\there", "\ufeffprod"} {
		a := Address{Space: space, Ref: workerRef, Name: "app"}
		var se *spaceid.Error
		if _, err := c.Read(ctx, a); !errors.As(err, &se) {
			t.Errorf("Read in space %q: %v; want a *spaceid.Error", space, err)
		}
		if _, err := c.Delete(ctx, a, pre); !errors.As(err, &se) {
			t.Errorf("Delete in space %q: %v", space, err)
		}
		if _, err := c.Forms(ctx, space, workerRef); !errors.As(err, &se) {
			t.Errorf("Forms in space %q: %v", space, err)
		}
	}
	bad := []Address{
		{Space: "prod", Ref: workerRef, Name: "App"},
		{Space: "prod", Ref: workerRef, Name: "a/b"},
		{Space: "prod", Ref: form.FormRef{APIVersion: "edge.forms.takoform.com/v1alpha1/x", Kind: "ModuleWorker", DefinitionVersion: "0.1.0", SchemaDigest: workerRef.SchemaDigest}, Name: "app"},
		{Space: "prod", Ref: form.FormRef{APIVersion: workerRef.APIVersion, Kind: "Module/Worker", DefinitionVersion: "0.1.0", SchemaDigest: workerRef.SchemaDigest}, Name: "app"},
	}
	for _, a := range bad {
		if _, err := c.Read(ctx, a); err == nil {
			t.Errorf("Read(%+v) accepted", a)
		}
	}
	ok := Address{Space: "prod", Ref: workerRef, Name: "app"}
	for _, p := range []Precondition{{}, {Generation: "01", UID: "uid-1"}, {Generation: "1"}, {Generation: "1", UID: "uid-1", Revision: "x"}} {
		if _, err := c.Delete(ctx, ok, p); err == nil {
			t.Errorf("Delete with fence %+v accepted", p)
		}
	}
	if _, err := c.Observe(ctx, ok, Precondition{}); err == nil {
		t.Error("Observe without a generation fence accepted")
	}
	req := wire.ApplyRequest{APIVersion: workerRef.APIVersion, Kind: "WorkerVersion", Form: wire.FormReference{FormRef: workerRef},
		Metadata: wire.Metadata{Name: "app", Space: "prod"}, Spec: []byte(`{}`), Review: wire.Review{PrepareDigest: workerRef.SchemaDigest}}
	if _, err := c.Apply(ctx, req, Precondition{}); err == nil {
		t.Error("Apply with a kind other than the FormRef's accepted")
	}
	req.Kind = workerRef.Kind
	req.ExpectedUID = "uid-1"
	if _, err := c.Apply(ctx, req, Precondition{}); err == nil {
		t.Error("a create carrying expectedUid accepted")
	}
	req.ExpectedUID = "uid-2"
	if _, err := c.Apply(ctx, req, pre); err == nil {
		t.Error("an expectedUid disagreeing with the fence's UID accepted")
	}
	req.ExpectedUID, req.Spec = "", []byte(`{"a":1,"a":2}`)
	if _, err := c.Apply(ctx, req, pre); err == nil {
		t.Error("a spec with a duplicate member was sent")
	}
	for _, id := range []string{"op_", "12", "op_a/b", "op_../x"} {
		if _, err := c.Operation(ctx, id); err == nil {
			t.Errorf("Operation(%q) accepted", id)
		}
	}
	if err := c.PutBlob(ctx, "up_1", "sha256:"+strings.Repeat("0", 64), []byte("x")); err == nil {
		t.Error("PutBlob with bytes that do not match the digest accepted")
	}
	if _, err := c.SupportInterface(ctx, "edge/kv", "1.0.0"); err == nil {
		t.Error("SupportInterface with a '/' in the name accepted")
	}
}
