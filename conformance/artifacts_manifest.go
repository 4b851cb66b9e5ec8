package conformance

import (
	"context"
	"fmt"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "artifact-manifest-reject-list", Group: "artifacts", Summary: "every manifest rule violation is artifact_invalid at upload start and mints no identity", Run: artifactRejectList},
		Check{ID: "artifact-commit-binds-declared-size", Group: "artifacts", Summary: "a manifest declaring a held blob under another size is refused at commit", Run: artifactCommitBindsSize},
		Check{ID: "artifact-manifest-kind-exclusive", Group: "artifacts", Summary: "a manifest carrying the other kind's members is artifact_invalid", Run: artifactKindExclusive},
		Check{ID: "bundle-main-module-is-loadable", Group: "artifacts", Summary: "a WorkerBundle's mainModule must be a listed, loadable module; auxiliary modules may be carried", Run: bundleMainModuleLoadable},
	)
}

// rxModuleEntry is one manifest module entry as JSON.
func rxModuleEntry(name, mediaType string, data []byte) map[string]any {
	return map[string]any{"name": name, "mediaType": mediaType, "size": len(data), "digest": ijson.SumDigest(data)}
}

// rxRejected starts an upload of each manifest as A1 and expects
// artifact_invalid, and that its digest names nothing readable.
func rxRejected(ctx context.Context, e *Env, cases map[string]map[string]any) error {
	for what, m := range cases {
		r, err := rxStart(ctx, e, e.Creds.A1, m)
		if err != nil {
			return err
		}
		if err := r.ExpectCode(wire.ArtifactInvalid); err != nil {
			return fmt.Errorf("%s: the manifest reject list refuses it (media types are exact tokens of the closed set, without parameters): %w", what, err)
		}
		d, err := ijson.DigestValue(m)
		if err != nil {
			return err
		}
		if err := rxManifestMissing(ctx, e, e.Creds.A1, d, what); err != nil {
			return err
		}
	}
	return nil
}

// rxMaxBundleBytes is the host's advertised limits.maximumBundleBytes
// (any Edge profile), or 0.
func rxMaxBundleBytes(ctx context.Context, e *Env) (int64, error) {
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return 0, err
	}
	for _, p := range profiles.Profiles {
		if n, ok := p.Limits["maximumBundleBytes"]; ok && p.FormRef != nil && p.FormRef.APIVersion == e.Group {
			return n, nil
		}
	}
	return 0, nil
}

func artifactRejectList(ctx context.Context, e *Env) error {
	src := rxSource()
	main := rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)
	bundle := func(mainModule string, modules ...any) map[string]any {
		return map[string]any{"apiVersion": wire.ArtifactsAPI, "kind": "WorkerBundle", "mainModule": mainModule, "modules": modules}
	}
	html := []byte("<!doctype html>" + randomHex(4))
	assets := func(path, mediaType string) map[string]any {
		return map[string]any{"apiVersion": wire.ArtifactsAPI, "kind": "StaticAssetBundle",
			"files": []any{map[string]any{"path": path, "mediaType": mediaType, "size": len(html), "digest": ijson.SumDigest(html)}}}
	}
	withName := func(name string) map[string]any {
		return bundle(name, rxModuleEntry(name, artifact.MediaTypeJavaScriptModule, src))
	}
	oversized := rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)
	oversized["size"] = artifact.MaxEntrySize + 1
	badDigest := rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)
	badDigest["digest"] = "sha256:ABC"
	cases := map[string]map[string]any{
		"a module of media type application/json":         bundle("index.js", main, rxModuleEntry("data.json", "application/json", []byte("{}"))),
		"a module name with a .. segment":                 withName("../index.js"),
		"a module name with a . segment":                  withName("./index.js"),
		"an absolute module name":                         withName("/index.js"),
		"a module name with a backslash":                  withName(`lib\index.js`),
		"a module name with a NUL":                        withName("index\x00.js"),
		"a mainModule no module lists":                    bundle("main.js", main),
		"a module listed twice":                           bundle("index.js", main, main),
		"a source map whose target module is absent":      bundle("index.js", main, rxModuleEntry("absent.js.map", artifact.MediaTypeSourceMap, []byte(`{"version":3}`))),
		"an entry above the schema's size bound":          bundle("index.js", oversized),
		"a malformed digest":                              bundle("index.js", badDigest),
		"no modules":                                      bundle("index.js"),
		"a WorkerBundle without mainModule":               {"apiVersion": wire.ArtifactsAPI, "kind": "WorkerBundle", "modules": []any{main}},
		"an unknown kind":                                 {"apiVersion": wire.ArtifactsAPI, "kind": "ContainerImage", "files": []any{}},
		"another apiVersion":                              {"apiVersion": "artifacts.example.com/v1", "kind": "WorkerBundle", "mainModule": "index.js", "modules": []any{main}},
		"a file path with a .. segment":                   assets("a/../index.html", "text/html"),
		"a file media type that is not lowercase":         assets("index.html", "Text/HTML"),
		"a file media type with parameters":               assets("index.html", "text/html; charset=utf-8"),
		"a module name longer than 240 characters":        withName(longName(241)),
		"a module of a media type outside the closed set": bundle("index.js", main, rxModuleEntry("style.css", "text/css", []byte("a{}"))),
	}
	max, err := rxMaxBundleBytes(ctx, e)
	if err != nil {
		return err
	}
	if max > 0 && max < artifact.MaxEntrySize {
		over := rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)
		over["size"] = max + 1
		cases["a bundle above the advertised maximumBundleBytes"] = bundle("index.js", over)
	}
	return rxRejected(ctx, e, cases)
}

// longName is a valid path segment of n characters ending in .js.
func longName(n int) string {
	b := make([]byte, n-3)
	for i := range b {
		b[i] = 'a'
	}
	return string(b) + ".js"
}

func artifactCommitBindsSize(ctx context.Context, e *Env) error {
	m, d, _, err := rxUploaded(ctx, e.A1)
	if err != nil {
		return err
	}
	blob := m.Modules[0].Digest
	// The blob is held, so this session needs no bytes: only the commit
	// can catch the size the manifest claims for it.
	lie := m
	lie.Modules = []wire.ManifestModule{m.Modules[0]}
	lie.Modules[0].Size++
	r, err := rxStart(ctx, e, e.Creds.A1, lie)
	if err != nil {
		return err
	}
	st, err := rxStarted(r)
	if err != nil {
		return err
	}
	if len(st.MissingBlobs) != 0 {
		return fmt.Errorf("missingBlobs = %v for a blob the tenant holds", st.MissingBlobs)
	}
	if r, err = rxCommit(ctx, e, e.Creds.A1, st.UploadID); err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactInvalid); err != nil {
		return fmt.Errorf("committing a held blob under another declared size: %w", err)
	}
	ld, err := ijson.DigestValue(lie)
	if err != nil {
		return err
	}
	if err := rxManifestMissing(ctx, e, e.Creds.A1, ld, "after the refused commit"); err != nil {
		return err
	}
	// The honest manifest and its blob are untouched.
	if held, err := e.A1.HeadBlob(ctx, blob); err != nil || !held {
		return fmt.Errorf("the refused commit disturbed the blob: held %v (%v)", held, err)
	}
	if _, err := e.A1.Manifest(ctx, d); err != nil {
		return err
	}
	// Bytes of another size than declared are refused on receipt too.
	fresh, _, fdata, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	fresh.Modules[0].Size--
	if r, err = rxStart(ctx, e, e.Creds.A1, fresh); err != nil {
		return err
	}
	if st, err = rxStarted(r); err != nil {
		return err
	}
	put, err := rxBlob(ctx, e, e.Creds.A1, st.UploadID, fresh.Modules[0].Digest, fdata[0])
	if err != nil {
		return err
	}
	if err := put.ExpectCode(wire.ArtifactInvalid); err != nil {
		return fmt.Errorf("uploading bytes of another size than declared: %w", err)
	}
	return nil
}

func artifactKindExclusive(ctx context.Context, e *Env) error {
	src := rxSource()
	modules := []any{rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)}
	html := []byte("<!doctype html>" + randomHex(4))
	files := []any{map[string]any{"path": "index.html", "mediaType": "text/html", "size": len(html), "digest": ijson.SumDigest(html)}}
	return rxRejected(ctx, e, map[string]map[string]any{
		"a WorkerBundle carrying files":              {"apiVersion": wire.ArtifactsAPI, "kind": "WorkerBundle", "mainModule": "index.js", "modules": modules, "files": files},
		"a StaticAssetBundle carrying modules":       {"apiVersion": wire.ArtifactsAPI, "kind": "StaticAssetBundle", "files": files, "modules": modules},
		"a StaticAssetBundle carrying a main module": {"apiVersion": wire.ArtifactsAPI, "kind": "StaticAssetBundle", "files": files, "mainModule": "index.js"},
		"a MigrationBundle carrying a main module":   {"apiVersion": wire.ArtifactsAPI, "kind": "MigrationBundle", "files": files, "mainModule": "index.js"},
		"a MigrationBundle carrying modules":         {"apiVersion": wire.ArtifactsAPI, "kind": "MigrationBundle", "files": files, "modules": modules},
	})
}

func bundleMainModuleLoadable(ctx context.Context, e *Env) error {
	src := rxSource()
	srcMap := []byte(`{"version":3,"sources":["index.js"],"names":[],"mappings":"","x":"` + randomHex(4) + `"}`)
	js := rxModuleEntry("index.js", artifact.MediaTypeJavaScriptModule, src)
	sm := rxModuleEntry("index.js.map", artifact.MediaTypeSourceMap, srcMap)
	bundle := func(mainModule string, modules ...any) map[string]any {
		return map[string]any{"apiVersion": wire.ArtifactsAPI, "kind": "WorkerBundle", "mainModule": mainModule, "modules": modules}
	}
	if err := rxRejected(ctx, e, map[string]map[string]any{
		"a mainModule naming an auxiliary source map": bundle("index.js.map", js, sm),
		"a mainModule naming no listed module":        bundle("worker.js", js, sm),
	}); err != nil {
		return err
	}
	// Carrying an auxiliary module beside a loadable main one is fine,
	// and the bundle backs a WorkerBundle resource.
	m, _, err := artifact.Build("index.js", []artifact.ModuleFile{
		{Name: "index.js", MediaType: artifact.MediaTypeJavaScriptModule, Data: src},
		{Name: "index.js.map", MediaType: artifact.MediaTypeSourceMap, Data: srcMap},
	})
	if err != nil {
		return err
	}
	d, err := e.A1.UploadArtifact(ctx, *m, map[string][]byte{ijson.SumDigest(src): src, ijson.SumDigest(srcMap): srcMap})
	if err != nil {
		return fmt.Errorf("a bundle carrying a source map beside its loadable main module: %w", err)
	}
	if _, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": d}); err != nil {
		return fmt.Errorf("a WorkerBundle over it: %w", err)
	}
	// Every loadable media type may be the main module.
	for _, mt := range []string{artifact.MediaTypeText, artifact.MediaTypeOctetStream} {
		data := []byte("main " + randomHex(8))
		r, err := rxStart(ctx, e, e.Creds.A1, bundle("main.bin", rxModuleEntry("main.bin", mt, data)))
		if err != nil {
			return err
		}
		if _, err := rxStarted(r); err != nil {
			return fmt.Errorf("a %s main module: %w", mt, err)
		}
	}
	return nil
}
