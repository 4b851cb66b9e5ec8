package artifact

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// VerifyBlob checks bytes received for a manifest entry (spec/host-api-v1alpha3.md §3.6 step 2,
// re-checked at commit): entryDigest must have the digest grammar
// (RuleDigest), len(data) must equal entrySize in bytes (RuleBlobSize) and
// ijson.SumDigest(data) must equal entryDigest (RuleBlobDigest). Errors are
// *Error with an empty Pointer.
func VerifyBlob(entryDigest string, entrySize int64, data []byte) error {
	if !ijson.ValidDigest(entryDigest) {
		return fail(RuleDigest, "", "declared digest %q is not \"sha256:\" followed by 64 lowercase hex digits", clip(entryDigest))
	}
	if int64(len(data)) != entrySize {
		return fail(RuleBlobSize, "", "received %d bytes for %s but the manifest declares %d; upload exactly the declared bytes", len(data), entryDigest, entrySize)
	}
	if got := ijson.SumDigest(data); got != entryDigest {
		return fail(RuleBlobDigest, "", "the received bytes hash to %s, not the declared %s; upload the bytes the manifest names", got, entryDigest)
	}
	return nil
}

// ModuleFile is one local module for Build: its module Name (an artifact
// path such as "worker.js" or "lib/util.mjs"), its MediaType (one of the
// five admitted module media types; "" means MediaTypeForName(Name)) and
// its bytes.
type ModuleFile struct {
	Name      string
	MediaType string
	Data      []byte
}

// Build makes a WorkerBundle manifest for a client upload (spec/host-api-v1alpha3.md §6.4: a
// bundle "can upload local module files"): one module per file with its
// size in bytes and digest (ijson.SumDigest of the bytes), sorted by name in
// byte order so the same files always give the same manifest and
// manifestDigest, plus the blobs to upload keyed by digest (modules with the
// same bytes share one blob). The manifest is checked with Verify (no host
// limits); its errors are *Error whose pointers index the sorted modules.
// modules is not modified.
func Build(mainModule string, modules []ModuleFile) (*wire.Manifest, map[string][]byte, error) {
	m := &wire.Manifest{
		APIVersion: wire.ArtifactsAPI,
		Kind:       KindWorkerBundle,
		MainModule: mainModule,
		Modules:    make([]wire.ManifestModule, 0, len(modules)),
	}
	blobs := make(map[string][]byte, len(modules))
	sorted := append([]ModuleFile(nil), modules...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i, f := range sorted {
		mt := f.MediaType
		if mt == "" {
			var ok bool
			if mt, ok = MediaTypeForName(f.Name); !ok {
				return nil, nil, fail(RuleMediaType, fmt.Sprintf("/modules/%d/mediaType", i),
					"no media type was given for module %q and its extension is not known; give one of the five module media types or use .js, .mjs, .wasm, .map, .txt or .bin", clip(f.Name))
			}
		}
		d := ijson.SumDigest(f.Data)
		m.Modules = append(m.Modules, wire.ManifestModule{Name: f.Name, MediaType: mt, Size: int64(len(f.Data)), Digest: d})
		blobs[d] = f.Data
	}
	if err := Verify(m, Limits{}); err != nil {
		return nil, nil, err
	}
	return m, blobs, nil
}

// MediaTypeForName returns the module media type for a module name's
// extension, compared case-insensitively: .js and .mjs →
// application/javascript+module, .wasm → application/wasm, .map →
// application/source-map+json, .txt → text/plain, .bin →
// application/octet-stream. ok is false for any other extension.
func MediaTypeForName(name string) (mediaType string, ok bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".js", ".mjs":
		return MediaTypeJavaScriptModule, true
	case ".wasm":
		return MediaTypeWasm, true
	case ".map":
		return MediaTypeSourceMap, true
	case ".txt":
		return MediaTypeText, true
	case ".bin":
		return MediaTypeOctetStream, true
	}
	return "", false
}
