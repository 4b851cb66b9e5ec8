package ingress_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/host/runtime/enginetest"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// siteWorker answers /api/… with "worker <label> <method> <path>" and
// everything else with 404 "worker <label> 404".
func siteWorker(label string) []byte {
	return []byte(`export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/api/")) return new Response("worker ` + label + ` " + request.method + " " + path);
    return new Response("worker ` + label + ` 404", { status: 404 });
  },
};
`)
}

// siteFiles is a small site of label: index.html, app.js and css/site.css.
func siteFiles(label string) map[string][2]string {
	return map[string][2]string{
		"index.html":   {"text/html", "<!doctype html><title>" + label + "</title>"},
		"app.js":       {"text/javascript", "console.log('" + label + "');"},
		"css/site.css": {"text/css", "/* " + label + " */"},
	}
}

// req sends method hostname path through the front (the path exactly as
// given: Go's client does not clean it) and returns status, header, body.
func req(t *testing.T, front *httptest.Server, method, hostname, path string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	r, err := http.NewRequest(method, front.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Host = hostname
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := front.Client().Do(r)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, hostname, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s%s: reading the body: %v", method, hostname, path, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// TestStaticAssetsServeThroughTheIngress deploys, through the Host API's
// lane v1beta1 on real SQLite and real workerd, a worker whose version
// carries a StaticAssetBundle (asset first, single-page application),
// checks what the ingress answers (spec/runtime-v1.md §9.2,
// spec/lane-v1beta1.md §6.4), then rolls out a version with another
// bundle served worker first with notFoundHandling none while clients
// read: every answer is one version's asset, and a client that saw the
// new bytes never sees the old ones again (spec/runtime-v1.md §9.1 (5)).
func TestStaticAssetsServeThroughTheIngress(t *testing.T) {
	h, front := startHost(t, enginetest.Binary(t))
	ctx := context.Background()
	e, err := conformance.NewEnvOptions(ctx, h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false, client.Options{Lane: wire.V1beta1})
	if err != nil {
		t.Fatal(err)
	}
	cat, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]form.FormRef{}
	for _, in := range cat.Forms() {
		if r := in.Definition.Ref(); r.APIVersion == edge.GroupV1beta1 {
			refs[r.Kind] = r
		}
	}
	rel := func(kind, name string) map[string]any {
		return map[string]any{"apiVersion": edge.GroupV1beta1, "kind": kind, "name": name}
	}
	create := func(kind, name string, spec map[string]any) *wire.Resource {
		t.Helper()
		r, err := e.Apply(ctx, e.A1, e.RequestIn(e.Space, refs[kind], name, spec), nil)
		if err != nil {
			t.Fatalf("create the %s %s: %v", kind, name, err)
		}
		return r
	}
	worker := e.Name("site")
	create("ModuleWorker", worker, map[string]any{})
	// version uploads label's worker and site and creates its version.
	version := func(label string, runWorkerFirst bool, notFound string) string {
		t.Helper()
		m := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: artifact.KindStaticAssetBundle}
		blobs := map[string][]byte{}
		for path, f := range siteFiles(label) {
			d := ijson.SumDigest([]byte(f[1]))
			m.Files = append(m.Files, wire.ManifestFile{Path: path, MediaType: f[0], Size: int64(len(f[1])), Digest: d})
			blobs[d] = []byte(f[1])
		}
		site, err := e.A1.UploadArtifact(ctx, m, blobs)
		if err != nil {
			t.Fatalf("upload the StaticAssetBundle of %s: %v", label, err)
		}
		siteName, codeName := e.Name("site-"+label), e.Name("code-"+label)
		create("StaticAssetBundle", siteName, map[string]any{"manifestDigest": site})
		code, err := e.UploadBundle(ctx, e.A1, siteWorker(label))
		if err != nil {
			t.Fatal(err)
		}
		create("WorkerBundle", codeName, map[string]any{"manifestDigest": code})
		name := e.Name("version-" + label)
		create("WorkerVersion", name, map[string]any{
			"worker": rel("ModuleWorker", worker), "bundle": rel("WorkerBundle", codeName), "handlers": []any{"fetch"},
			"assets": map[string]any{"bundle": rel("StaticAssetBundle", siteName), "runWorkerFirst": runWorkerFirst, "notFoundHandling": notFound},
		})
		return name
	}
	deploySpec := func(version string) map[string]any {
		return map[string]any{"worker": rel("ModuleWorker", worker), "versions": []any{map[string]any{"weight": 10000, "workerVersion": rel("WorkerVersion", version)}}}
	}
	v1 := version("v1", false, "single_page_application")
	deployment := create("WorkerDeployment", e.Name("deploy"), deploySpec(v1))
	ep := create("WorkerEndpoint", e.Name("endpoint"), map[string]any{"worker": rel("ModuleWorker", worker)})
	hostname := endpointHostname(t, ep.Status.Outputs)
	v1files := siteFiles("v1")
	waitAsset(t, front, hostname, v1files["app.js"][1])

	t.Run("asset first, single-page application", func(t *testing.T) {
		status, hdr, body := req(t, front, http.MethodGet, hostname, "/app.js", nil)
		etag := `"` + ijson.SumDigest([]byte(v1files["app.js"][1])) + `"`
		if status != 200 || body != v1files["app.js"][1] || hdr.Get("Content-Type") != "text/javascript" || hdr.Get("ETag") != etag || hdr.Get("Content-Length") != "18" {
			t.Errorf("GET /app.js = %d %v %q", status, hdr, body)
		}
		if status, hdr, body := req(t, front, http.MethodHead, hostname, "/css/site.css", nil); status != 200 || body != "" || hdr.Get("Content-Type") != "text/css" || hdr.Get("Content-Length") != "8" {
			t.Errorf("HEAD /css/site.css = %d %v %q", status, hdr, body)
		}
		if status, _, body := req(t, front, http.MethodGet, hostname, "/app.js", map[string]string{"If-None-Match": etag}); status != http.StatusNotModified || body != "" {
			t.Errorf("GET /app.js If-None-Match its etag = %d %q, want 304", status, body)
		}
		for _, c := range []struct{ method, path, want string }{
			{"GET", "/", v1files["index.html"][1]},
			{"GET", "/settings/profile", v1files["index.html"][1]},
			{"POST", "/api/login", "worker v1 POST /api/login"},
			{"POST", "/app.js", "worker v1 404"},
			// Invalid paths fail closed: to the worker, never index.html.
			{"GET", "/a/../app.js", "worker v1 404"},
			{"GET", "/css%2Fsite.css", "worker v1 404"},
			{"GET", "/app.js%00", "worker v1 404"},
			{"GET", "/.env", "worker v1 404"},
		} {
			if _, _, body := req(t, front, c.method, hostname, c.path, nil); body != c.want {
				t.Errorf("%s %s = %q, want %q", c.method, c.path, body, c.want)
			}
		}
	})

	v2 := version("v2", true, "none")
	v2files := siteFiles("v2")
	var stop atomic.Bool
	var total atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sawNew := false
			for !stop.Load() {
				status, _, body := req(t, front, http.MethodGet, hostname, "/app.js", nil)
				total.Add(1)
				switch {
				case status != 200:
					t.Errorf("GET /app.js during the rollout = %d %q", status, body)
				case body == v2files["app.js"][1]:
					sawNew = true
				case body != v1files["app.js"][1] || sawNew:
					t.Errorf("GET /app.js during the rollout = %q after the new bytes: %v", body, sawNew)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := e.Apply(ctx, e.A1, e.RequestIn(e.Space, refs["WorkerDeployment"], deployment.Metadata.Name, deploySpec(v2)), deployment); err != nil {
		t.Fatalf("roll out v2: %v", err)
	}
	waitAsset(t, front, hostname, v2files["app.js"][1])
	time.Sleep(2 * time.Second) // past the old generation's stop
	stop.Store(true)
	wg.Wait()
	t.Logf("%d asset requests during the rollout", total.Load())

	t.Run("worker first, none", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			status       int
			want         string
		}{
			{"GET", "/app.js", 200, v2files["app.js"][1]}, // the worker's 404, then the asset
			{"GET", "/api/app.js", 200, "worker v2 GET /api/app.js"},
			{"GET", "/settings/profile", 404, "worker v2 404"}, // none: the worker's 404 stands
			{"GET", "/", 404, "worker v2 404"},
			{"GET", "/a/../app.js", 404, "worker v2 404"},
		} {
			if status, _, body := req(t, front, c.method, hostname, c.path, nil); status != c.status || body != c.want {
				t.Errorf("%s %s = %d %q, want %d %q", c.method, c.path, status, body, c.status, c.want)
			}
		}
		if _, _, body := req(t, front, http.MethodGet, hostname, "/css/site.css", nil); strings.Contains(body, "v1") {
			t.Errorf("after the rollout /css/site.css = %q, v1's bytes", body)
		}
	})
}

// waitAsset polls GET hostname/app.js until it answers want.
func waitAsset(t *testing.T, front *httptest.Server, hostname, want string) {
	t.Helper()
	var last string
	for range 600 {
		status, _, body := req(t, front, http.MethodGet, hostname, "/app.js", nil)
		if status == http.StatusOK && body == want {
			return
		}
		last = body
		sleep()
	}
	t.Fatalf("%s/app.js never answered %q; last %q", hostname, want, last)
}
