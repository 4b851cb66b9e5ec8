package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/runtime/engine"
	"github.com/takoform/takoform/host/store"
)

// assetsDir is the directory of a generation that holds its versions'
// static asset bytes, one file per digest (engine.AssetFileName).
const assetsDir = "assets"

// writeAssets makes a version's static assets ready for its shard
// generation (spec/runtime-v1.md §9.2, repo decision 0059): it reads the
// committed StaticAssetBundle manifest a names from the store and writes
// each file's blob, once per digest, into genDir's assets directory,
// which the version's disk service reads. The bytes are the store's
// committed blobs, so a generation serves exactly the manifest its
// version pins; a rollout to another version is a new generation and
// swaps assets with the version choice (spec/runtime-v1.md §9.1 (5)).
func writeAssets(tx store.Tx, genDir string, a *assetsSpec) (*engine.Assets, error) {
	doc, err := tx.Manifest(a.manifest)
	if err != nil {
		return nil, fmt.Errorf("static asset manifest %s: %w", a.manifest, err)
	}
	m, err := artifact.ParseManifest(doc)
	if err != nil {
		return nil, fmt.Errorf("static asset manifest %s: %w", a.manifest, err)
	}
	if m.Kind != artifact.KindStaticAssetBundle {
		return nil, fmt.Errorf("static asset manifest %s is a %s, not a %s", a.manifest, m.Kind, artifact.KindStaticAssetBundle)
	}
	dir, err := filepath.Abs(filepath.Join(genDir, assetsDir))
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	out := &engine.Assets{Dir: dir, RunWorkerFirst: a.runWorkerFirst, SinglePageApplication: a.spa}
	for _, f := range m.Files {
		out.Files = append(out.Files, engine.AssetFile{Path: f.Path, MediaType: f.MediaType, Size: f.Size, Digest: f.Digest})
		p := filepath.Join(dir, engine.AssetFileName(f.Digest))
		if _, err := os.Stat(p); err == nil {
			continue // the same bytes, another path or version
		}
		b, err := tx.Blob(f.Digest)
		if err != nil {
			return nil, fmt.Errorf("static asset %s (%s): %w", f.Path, f.Digest, err)
		}
		if int64(len(b)) != f.Size {
			return nil, fmt.Errorf("static asset %s (%s): the store holds %d bytes, the manifest says %d", f.Path, f.Digest, len(b), f.Size)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return nil, err
		}
	}
	return out, nil
}
