package artifact

import (
	"sort"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// File is one local file for BuildFiles: its artifact Path (the manifest
// path grammar, e.g. "assets/app.css" or "0001_init.sql"), its MediaType
// (one lowercase type/subtype token, spec/lane-v1beta1.md §3.6) and its
// bytes.
type File struct {
	Path      string
	MediaType string
	Data      []byte
}

// BuildFiles makes a StaticAssetBundle or MigrationBundle manifest for a
// client upload (spec/lane-v1beta1.md §6.6, §6.7, §13.2): one entry per
// file with its size in bytes and digest (ijson.SumDigest of the bytes),
// plus the blobs to upload keyed by digest (files with the same bytes
// share one blob). A StaticAssetBundle's files are sorted by path in byte
// order, since their order means nothing: the same files always give the
// same manifest and manifestDigest. A MigrationBundle keeps the given
// order: it is the migration order. The manifest is checked with Verify
// under the lane v1beta1 rules a host applies at commit
// (Limits.SQLMigrationFiles; lim's other bounds as given), so a plan
// refuses what the host would; its errors are *Error whose pointers index
// the manifest's files. files is not modified.
func BuildFiles(kind string, files []File, lim Limits) (*wire.Manifest, map[string][]byte, error) {
	m := &wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: kind, Files: make([]wire.ManifestFile, 0, len(files))}
	blobs := make(map[string][]byte, len(files))
	ordered := append([]File(nil), files...)
	if kind == KindStaticAssetBundle {
		sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Path < ordered[j].Path })
	}
	for _, f := range ordered {
		d := ijson.SumDigest(f.Data)
		m.Files = append(m.Files, wire.ManifestFile{Path: f.Path, MediaType: f.MediaType, Size: int64(len(f.Data)), Digest: d})
		blobs[d] = f.Data
	}
	lim.SQLMigrationFiles = true
	if err := Verify(m, lim); err != nil {
		return nil, nil, err
	}
	return m, blobs, nil
}
