package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/takoform/takoform/artifact"
)

// Assets is a version's static assets (WorkerVersion.assets,
// spec/runtime-v1.md §9.2, spec/lane-v1beta1.md §6.4): the files of its
// committed StaticAssetBundle manifest and the two serving choices. The
// generated entry serves them in the version's own isolate, so every
// fetch invocation of the version — hostname routes and service calls
// alike — gets the same lookup (repo decision 0059).
type Assets struct {
	// Dir is an absolute directory holding each file's bytes under
	// AssetFileName(digest); workerd reads it as a read-only disk service.
	Dir   string
	Files []AssetFile
	// RunWorkerFirst: fetch first, the lookup only when it answered 404;
	// otherwise the lookup first and fetch only on a miss.
	RunWorkerFirst bool
	// SinglePageApplication: a missing valid path answers index.html
	// (notFoundHandling single_page_application); otherwise it is a miss.
	SinglePageApplication bool
}

// AssetFile is one file of a StaticAssetBundle manifest: its path (the
// manifest path grammar), media type, size in bytes and digest
// ("sha256:" and 64 lowercase hex).
type AssetFile struct {
	Path      string
	MediaType string
	Size      int64
	Digest    string
}

// AssetFileName is the name of a file's bytes in Assets.Dir: its digest's
// 64 hex digits, so equal contents are written once and no manifest path
// ever names a file on disk.
func AssetFileName(digest string) string { return strings.TrimPrefix(digest, "sha256:") }

// AssetsRawName is the internal workerd binding name of a version's
// assets disk service; tenant code never sees it (the entry builds env).
const AssetsRawName = "__takoform_assets"

// AssetMissBody is the host's 404 for a GET or HEAD that no asset
// answers on a version whose main module exports no fetch handler: with
// no worker there is no worker 404 to keep (spec/runtime-v1.md §10.8).
const AssetMissBody = "404 Not Found: no static asset at this path\n"

// AssetMethodBody is the host's 405 for a method other than GET or HEAD
// on such a version: only GET and HEAD look assets up.
const AssetMethodBody = "405 Method Not Allowed: this worker serves static assets only, with GET or HEAD\n"

// AssetCacheControl is the cache-control of every asset answer: caches may
// keep the bytes but must revalidate them (If-None-Match against the
// digest etag answers 304), because a rollout may change what a path holds.
const AssetCacheControl = "public, max-age=0, must-revalidate"

// assetsPreamble is the entry's asset table for a (not nil): a JSON map from path to
// [file name, media type, size, etag], and the two serving choices.
func assetsPreamble(a *Assets) (string, error) {
	table := map[string][4]string{}
	for _, f := range a.Files {
		if _, dup := table[f.Path]; dup {
			return "", fmt.Errorf("static asset path %q is listed twice", f.Path)
		}
		table[f.Path] = [4]string{AssetFileName(f.Digest), f.MediaType, strconv.FormatInt(f.Size, 10), strconv.Quote(f.Digest)}
	}
	if a.SinglePageApplication {
		if _, ok := table[artifact.SPAIndex]; !ok {
			return "", fmt.Errorf("notFoundHandling is single_page_application but the bundle lists no %s", artifact.SPAIndex)
		}
	}
	raw, err := json.Marshal(table)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("const ASSETS = { files: new Map(Object.entries(JSON.parse(%s))), workerFirst: %t, spa: %t };\nconst ASSET_MISS = %s;\nconst ASSET_METHOD = %s;\nconst ASSET_CACHE = %s;\nconst ASSET_BINDING = %s;\nconst SPA_INDEX = %s;\n",
		jsString(string(raw)), a.RunWorkerFirst, a.SinglePageApplication, jsString(AssetMissBody), jsString(AssetMethodBody), jsString(AssetCacheControl), jsString(AssetsRawName), jsString(artifact.SPAIndex)), nil
}

// assetsHandlers is the entry's asset serving (spec/lane-v1beta1.md
// §6.4, spec/runtime-v1.md §9.2): assetPath is the closed path mapping
// (null: invalid, fails closed; "": the root, a valid miss), lookup the
// GET/HEAD answer of a hit (a 200 with the manifest's media type, size
// and digest etag, streamed from the disk service; a 304 when
// If-None-Match matches; null on a miss), withAssets the serving order
// around the tenant's fetch (which never throws: the entry's own handler
// answers 500 for a failing worker), replacing handlers.fetch. A version
// whose main module exports no fetch answers a miss with the host's 404
// (AssetMissBody) and other methods with 405 (AssetMethodBody).
const assetsHandlers = `const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const ASSET_GRAMMAR = /^[A-Za-z0-9_][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/;
function escapedPath(url) {
  let rest = url;
  const scheme = rest.indexOf("://");
  if (scheme >= 0) {
    rest = rest.slice(scheme + 3);
    const start = rest.search(/[\/?#]/);
    rest = start < 0 ? "" : rest.slice(start);
  }
  const end = rest.search(/[?#]/);
  return end < 0 ? rest : rest.slice(0, end);
}
function assetPath(url) {
  const path = escapedPath(url);
  if (!path.startsWith("/")) return null;
  if (/%2f|%5c/i.test(path) || path.includes("\\")) return null;
  const raw = new TextEncoder().encode(path);
  const bytes = new Uint8Array(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x25) { bytes[n++] = raw[i]; continue; }
    const hex = String.fromCharCode(raw[i + 1] ?? 0, raw[i + 2] ?? 0);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
    bytes[n++] = parseInt(hex, 16);
    i += 2;
  }
  let decoded;
  try { decoded = STRICT_UTF8.decode(bytes.subarray(0, n)); } catch { return null; }
  for (const ch of decoded) {
    const c = ch.codePointAt(0);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) === 0xfffe || ch === "\\") return null;
  }
  const p = decoded.slice(1);
  if (p === "") return "";
  for (const seg of p.split("/")) {
    if (seg === "" || seg === "." || seg === "..") return null;
  }
  if (!ASSET_GRAMMAR.test(p) || p.length > 240) return null;
  return p;
}
function etagMatches(header, etag) {
  if (header === null) return false;
  for (let tag of header.split(",")) {
    tag = tag.trim();
    if (tag === "*") return true;
    if (tag.startsWith("W/")) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}
async function lookup(request, raw) {
  const p = assetPath(request.url);
  if (p === null) return null;
  let f = p === "" ? undefined : ASSETS.files.get(p);
  if (f === undefined && ASSETS.spa) f = ASSETS.files.get(SPA_INDEX);
  if (f === undefined) return null;
  const [file, type, size, etag] = f;
  if (etagMatches(request.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers: { etag, "cache-control": ASSET_CACHE } });
  }
  const headers = { "content-type": type, "content-length": size, etag, "cache-control": ASSET_CACHE };
  if (request.method === "HEAD") return new Response(null, { headers });
  const bytes = await raw[ASSET_BINDING].fetch("http://assets/" + file);
  if (bytes.status !== 200) throw new Error("static asset " + p + " is missing from the shard (" + bytes.status + ")");
  return new Response(bytes.body, { headers });
}
function assetMiss(lookable) {
  const headers = { "content-type": "text/plain; charset=utf-8" };
  if (!lookable) headers.allow = "GET, HEAD";
  return new Response(lookable ? ASSET_MISS : ASSET_METHOD, { status: lookable ? 404 : 405, headers });
}
function withAssets(fetch) {
  return async function (request, raw, native) {
    const lookable = request.method === "GET" || request.method === "HEAD";
    try {
      if (lookable && !ASSETS.workerFirst) {
        const hit = await lookup(request, raw);
        if (hit !== null) return hit;
      }
      if (fetch === undefined) {
        return (lookable && ASSETS.workerFirst ? await lookup(request, raw) : null) ?? assetMiss(lookable);
      }
      const response = await fetch(request, raw, native);
      if (lookable && ASSETS.workerFirst && response.status === 404) {
        const hit = await lookup(request, raw);
        if (hit !== null) {
          if (response.body !== null) response.body.cancel().catch(() => {});
          return hit;
        }
      }
      return response;
    } catch (err) {
      report(native, err);
      return failed();
    }
  };
}
handlers.fetch = withAssets(handlers.fetch);
`
