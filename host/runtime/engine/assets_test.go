package engine_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/runtime/enginetest"
)

// assetWorker answers "worker <method> <path>" with 200 for /api/…, and
// with 404 "worker 404" otherwise; /svc/<path> calls the service binding
// SVC (when declared) with <path> and answers what it answered.
const assetWorker = `export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/svc/")) {
      const r = await env.SVC.fetch("https://peer.example/" + path.slice(5));
      return new Response("svc " + r.status + " " + (await r.text()), { headers: { "content-type": r.headers.get("content-type") ?? "" } });
    }
    if (path.startsWith("/api/")) return new Response("worker " + request.method + " " + path);
    return new Response("worker 404", { status: 404 });
  },
};`

// scheduledOnly exports no fetch handler.
const scheduledOnly = `export default { async scheduled() {} };`

type asset struct{ path, mediaType, body string }

var assetFiles = []asset{
	{"index.html", "text/html", "<!doctype html><title>spa</title>"},
	{"app.js", "text/javascript", "console.log('app');"},
	{"css/site.css", "text/css", "body { color: red }"},
	{"same.txt", "text/plain", "console.log('app');"}, // the bytes of app.js: one file on disk
}

func digestOf(b string) string {
	sum := sha256.Sum256([]byte(b))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// startAssetShard runs one shard on real workerd with four versions:
// "first" (asset first, single-page application), "plain" (asset first,
// none), "wfirst" (worker first, none), "bare" (no fetch handler, none) and "caller" (no assets,
// SVC → "first"). It returns each version's socket by UID.
func startAssetShard(t *testing.T) map[string]string {
	t.Helper()
	bin := enginetest.Binary(t)
	dir := t.TempDir()
	assetDir := filepath.Join(dir, "assets")
	if err := os.Mkdir(assetDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var files []engine.AssetFile
	for _, a := range assetFiles {
		d := digestOf(a.body)
		if err := os.WriteFile(filepath.Join(assetDir, engine.AssetFileName(d)), []byte(a.body), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, engine.AssetFile{Path: a.path, MediaType: a.mediaType, Size: int64(len(a.body)), Digest: d})
	}
	sh := engine.Shard{Dir: dir, Health: filepath.Join(dir, "health.sock")}
	add := func(uid, source string, assets *engine.Assets, services []engine.Service) {
		sh.Versions = append(sh.Versions, engine.Version{
			UID: uid, MainModule: "index.js",
			Modules:  []engine.Module{{Name: "index.js", MediaType: "application/javascript+module", Data: []byte(source)}},
			Services: services, Assets: assets,
			Socket: filepath.Join(dir, uid+".sock"),
		})
	}
	add("first", assetWorker, &engine.Assets{Dir: assetDir, Files: files, SinglePageApplication: true}, nil)
	add("plain", assetWorker, &engine.Assets{Dir: assetDir, Files: files}, nil)
	add("wfirst", assetWorker, &engine.Assets{Dir: assetDir, Files: files, RunWorkerFirst: true}, nil)
	add("bare", scheduledOnly, &engine.Assets{Dir: assetDir, Files: files}, nil)
	add("caller", assetWorker, nil, []engine.Service{{Name: "SVC", Targets: []engine.ServiceTarget{{Version: "first", Weight: 10000}}}})
	cfg, err := engine.WriteConfig(sh)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Start(bin, cfg, false, nil, nil, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, sh.Health); err != nil {
		t.Fatal(err)
	}
	socks := map[string]string{}
	for _, v := range sh.Versions {
		socks[v.UID] = v.Socket
	}
	return socks
}

// rawRequest sends one HTTP/1.1 request with target exactly as given
// (no client-side normalisation) and returns the response and its body.
func rawRequest(t *testing.T, sock, method, target string, header map[string]string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: ep-x.workers.takoform.localhost\r\nConnection: close\r\n")
	for k, v := range header {
		b.WriteString(k + ": " + v + "\r\n")
	}
	if method == http.MethodPost {
		b.WriteString("Content-Length: 0\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, target, err)
	}
	return resp, string(body)
}

func assetBody(path string) string {
	for _, a := range assetFiles {
		if a.path == path {
			return a.body
		}
	}
	panic(path)
}

// TestAssetPathMapping runs the closed path mapping of
// spec/lane-v1beta1.md §6.4 on real workerd, on an asset-first
// single-page version whose worker answers "worker 404" to what it does
// not know: a valid path is served (a missing one answers index.html),
// an invalid one fails closed — it reaches the worker and never
// index.html.
func TestAssetPathMapping(t *testing.T) {
	sock := startAssetShard(t)["first"]
	spa := assetBody("index.html")
	for _, c := range []struct{ target, want string }{
		{"/app.js", assetBody("app.js")},
		{"/css/site.css", assetBody("css/site.css")},
		{"/app.js?v=2", assetBody("app.js")},
		{"/%61pp.js", assetBody("app.js")},             // decoded once
		{"/", spa},                                     // the root: a valid miss
		{"/dashboard/settings", spa},                   // a valid miss
		{"/" + strings.Repeat("a", 240), spa},          // 240 characters: valid
		{"/" + strings.Repeat("a", 241), "worker 404"}, // too long: invalid
		{"/%2561pp.js", "worker 404"},                  // never decoded twice
		{"/a/../app.js", "worker 404"},
		{"/../app.js", "worker 404"},
		{"/./app.js", "worker 404"},
		{"/%2e%2e/app.js", "worker 404"},
		{"//app.js", "worker 404"},
		{"/css/", "worker 404"},
		{"/css%2Fsite.css", "worker 404"},
		{"/css%2fsite.css", "worker 404"},
		{"/css%5Csite.css", "worker 404"},
		{"/css%5csite.css", "worker 404"},
		{`/css\site.css`, "worker 404"},
		{"/app.js%00", "worker 404"},
		{"/app%0a.js", "worker 404"},
		{"/%C3%28", "worker 404"},       // not UTF-8
		{"/%EF%B7%90", "worker 404"},    // U+FDD0
		{"/%EF%BF%BE", "worker 404"},    // U+FFFE
		{"/%F0%9F%BF%BF", "worker 404"}, // U+1FFFF
		{"/caf%C3%A9", "worker 404"},    // UTF-8, outside the path grammar
		{"/%ZZ", "worker 404"},
		{"/a%", "worker 404"},
		{"/.hidden", "worker 404"},
		{"/a%20b", "worker 404"},
	} {
		resp, body := rawRequest(t, sock, http.MethodGet, c.target, nil)
		if body != c.want {
			t.Errorf("GET %q = %d %q, want %q", c.target, resp.StatusCode, body, c.want)
		}
	}
}

// TestAssetsServe checks what an asset answer carries and the serving
// order of each mode (spec/runtime-v1.md §9.2, spec/lane-v1beta1.md §6.4).
func TestAssetsServe(t *testing.T) {
	socks := startAssetShard(t)
	app := assetBody("app.js")
	etag := `"` + digestOf(app) + `"`

	t.Run("a hit", func(t *testing.T) {
		resp, body := rawRequest(t, socks["first"], http.MethodGet, "/app.js", nil)
		h := resp.Header
		if resp.StatusCode != 200 || body != app || h.Get("Content-Type") != "text/javascript" || h.Get("Content-Length") != "19" || h.Get("ETag") != etag || h.Get("Cache-Control") != engine.AssetCacheControl {
			t.Errorf("GET /app.js = %d %v %q", resp.StatusCode, h, body)
		}
		resp, body = rawRequest(t, socks["first"], http.MethodHead, "/app.js", nil)
		if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != "19" || resp.Header.Get("ETag") != etag || resp.Header.Get("Content-Type") != "text/javascript" {
			t.Errorf("HEAD /app.js = %d %v %q", resp.StatusCode, resp.Header, body)
		}
		resp, body = rawRequest(t, socks["first"], http.MethodGet, "/same.txt", nil)
		if resp.StatusCode != 200 || body != app || resp.Header.Get("Content-Type") != "text/plain" || resp.Header.Get("ETag") != etag {
			t.Errorf("GET /same.txt (app.js's bytes) = %d %v %q", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("If-None-Match", func(t *testing.T) {
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			resp, body := rawRequest(t, socks["first"], http.MethodGet, "/app.js", map[string]string{"If-None-Match": inm})
			if resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("ETag") != etag {
				t.Errorf("If-None-Match %s: %d %v %q, want 304", inm, resp.StatusCode, resp.Header, body)
			}
		}
		resp, body := rawRequest(t, socks["first"], http.MethodGet, "/app.js", map[string]string{"If-None-Match": `"sha256:00"`})
		if resp.StatusCode != 200 || body != app {
			t.Errorf("a stale If-None-Match: %d %q, want the asset", resp.StatusCode, body)
		}
	})
	t.Run("asset first", func(t *testing.T) {
		for _, c := range []struct{ uid, method, target, want string }{
			{"plain", "GET", "/app.js", app},
			{"plain", "GET", "/api/users", "worker GET /api/users"}, // a miss: fetch
			{"plain", "GET", "/", "worker 404"},
			{"plain", "POST", "/app.js", "worker 404"}, // other methods go straight to fetch
			// A single-page application answers every valid GET itself.
			{"first", "GET", "/api/users", assetBody("index.html")},
			{"first", "POST", "/api/x", "worker POST /api/x"},
		} {
			if _, body := rawRequest(t, socks[c.uid], c.method, c.target, nil); body != c.want {
				t.Errorf("%s: %s %s = %q, want %q", c.uid, c.method, c.target, body, c.want)
			}
		}
	})
	t.Run("worker first", func(t *testing.T) {
		for _, c := range []struct {
			method, target string
			status         int
			want           string
		}{
			{"GET", "/api/app.js", 200, "worker GET /api/app.js"}, // the worker answered: no lookup
			{"GET", "/app.js", 200, app},                          // the worker's 404, then a hit
			{"HEAD", "/app.js", 200, ""},
			{"GET", "/nothing", 404, "worker 404"}, // both miss: the worker's 404 stands
			{"GET", "/", 404, "worker 404"},        // none: the root is a miss
			{"GET", "/a/../app.js", 404, "worker 404"},
			{"POST", "/app.js", 404, "worker 404"},
		} {
			resp, body := rawRequest(t, socks["wfirst"], c.method, c.target, nil)
			if resp.StatusCode != c.status || body != c.want {
				t.Errorf("%s %s = %d %q, want %d %q", c.method, c.target, resp.StatusCode, body, c.status, c.want)
			}
		}
	})
	t.Run("no fetch handler", func(t *testing.T) {
		for _, c := range []struct {
			method, target string
			status         int
			want           string
		}{
			{"GET", "/css/site.css", 200, assetBody("css/site.css")},
			{"GET", "/nothing", 404, engine.AssetMissBody},
			{"GET", "/", 404, engine.AssetMissBody},
			{"POST", "/app.js", 405, engine.AssetMethodBody},
		} {
			resp, body := rawRequest(t, socks["bare"], c.method, c.target, nil)
			if resp.StatusCode != c.status || body != c.want {
				t.Errorf("%s %s = %d %q, want %d %q", c.method, c.target, resp.StatusCode, body, c.status, c.want)
			}
		}
	})
	t.Run("service call", func(t *testing.T) {
		resp, body := rawRequest(t, socks["caller"], http.MethodGet, "/svc/app.js", nil)
		if body != "svc 200 "+app || resp.Header.Get("Content-Type") != "text/javascript" {
			t.Errorf("a service call to an asset = %q (%v), want the asset", body, resp.Header)
		}
		if _, body := rawRequest(t, socks["caller"], http.MethodGet, "/svc/deep/link", nil); body != "svc 200 "+assetBody("index.html") {
			t.Errorf("a service call to a missing path = %q, want index.html", body)
		}
	})
}
