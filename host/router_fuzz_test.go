package host_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// fuzzRoute is one route of the Host API with concrete path values.
type fuzzRoute struct {
	method, path string
	idempotent   bool
}

// FuzzRouter sends arbitrary bodies to every route of a real host (SQLite
// file, in-process handler): no body may make the host fail (500) or
// answer an error outside the envelope, and every answer carries its
// request id, equal to the envelope's requestId.
func FuzzRouter(f *testing.F) {
	h := hosttest.Start(f, hosttest.Options{})
	c, err := client.New(f.Context(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		f.Fatal(err)
	}
	kv := kvRequest(f, c, "fz")
	ref := kv.Form.FormRef
	q := url.Values{"space": {"fz"}, "group": {ref.APIVersion}, "kind": {ref.Kind}, "definitionVersion": {ref.DefinitionVersion}, "schemaDigest": {ref.SchemaDigest}}.Encode()
	api, res := wire.V1alpha3.APIBase, wire.V1alpha3.APIBase+"/resources/"+ref.APIVersion+"/"+ref.Kind+"/fz"
	blob := "sha256:" + hex.EncodeToString(make([]byte, 32))
	routes := []fuzzRoute{
		{http.MethodGet, wire.V1alpha3.DiscoveryPath, false},
		{http.MethodGet, api + "/forms?" + q, false},
		{http.MethodGet, api + "/form-definitions/" + ref.APIVersion + "/" + ref.Kind + "?" + q, false},
		{http.MethodPost, api + "/resources/validate", false},
		{http.MethodPost, api + "/resources/prepare", false},
		{http.MethodGet, res + "?" + q, false},
		{http.MethodPut, res, true},
		{http.MethodDelete, res + "?" + q, true},
		{http.MethodPost, res + "/import", true},
		{http.MethodPost, res + "/observe?" + q, true},
		{http.MethodGet, api + "/operations/op_1", false},
		{http.MethodPost, api + "/operations/op_1/cancel", true},
		{http.MethodPost, api + "/artifacts/uploads", true},
		{http.MethodDelete, api + "/artifacts/uploads/up_1", true},
		{http.MethodPut, api + "/artifacts/uploads/up_1/blobs/" + blob, false},
		{http.MethodPost, api + "/artifacts/uploads/up_1/commit", true},
		{http.MethodGet, api + "/artifacts/" + blob, false},
		{http.MethodHead, api + "/artifacts/blobs/" + blob, false},
		{http.MethodGet, api + "/support/forms", false},
		{http.MethodGet, api + "/support/forms/" + ref.APIVersion + "/" + ref.Kind + "/" + ref.DefinitionVersion, false},
		{http.MethodGet, api + "/support/interfaces/x/v1", false},
		{http.MethodGet, api + "/support/bindings/x/v1", false},
		{http.MethodGet, "/livez", false},
		{http.MethodGet, "/readyz", false},
	}
	kvBody, err := json.Marshal(kv)
	if err != nil {
		f.Fatal(err)
	}
	m, _, err := artifact.Build("index.js", []artifact.ModuleFile{{Name: "index.js", Data: []byte("export default {};\n")}})
	if err != nil {
		f.Fatal(err)
	}
	upload, err := json.Marshal(wire.UploadRequest{Manifest: mustRaw(f, m)})
	if err != nil {
		f.Fatal(err)
	}
	for i := range routes {
		for _, seed := range [][]byte{nil, []byte(`{}`), kvBody, upload, []byte(`{"metadata":{"space":"fz"},"spec":[]}`)} {
			f.Add(uint8(i), seed, i%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte, create bool) {
		rt := routes[int(which)%len(routes)]
		req := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
		if rt.idempotent {
			var k [8]byte
			_, _ = rand.Read(k[:])
			req.Header.Set(wire.HeaderIdempotency, hex.EncodeToString(k[:]))
		}
		if create {
			req.Header.Set("If-None-Match", "*")
		} else {
			req.Header.Set(wire.HeaderGeneration, "1")
		}
		w := httptest.NewRecorder()
		h.Server.ServeHTTP(w, req)
		id := w.Header().Get(wire.HeaderRequestID)
		if id == "" {
			t.Fatalf("%s %s: no %s", rt.method, rt.path, wire.HeaderRequestID)
		}
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %s with body %q: HTTP %d %s", rt.method, rt.path, body, w.Code, w.Body.Bytes())
		}
		if w.Code < 400 || rt.method == http.MethodHead || rt.path == "/readyz" {
			return
		}
		var env wire.ErrorEnvelope
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s %s: HTTP %d outside the envelope: %q", rt.method, rt.path, w.Code, w.Body.Bytes())
		}
		if err := wire.CheckEnvelope(w.Code, env.Error); err != nil || env.Error.RequestID != id {
			t.Fatalf("%s %s: envelope %+v (%v), header id %s", rt.method, rt.path, env.Error, err, id)
		}
	})
}

func mustRaw(f *testing.F, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
