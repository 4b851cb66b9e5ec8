package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "artifact-upload-missing-blob", Group: "artifacts", Summary: "missingBlobs names what the tenant lacks, resumably; committing without a blob is artifact_missing", Run: artifactUploadMissingBlob},
		Check{ID: "artifact-digest-mismatch", Group: "artifacts", Summary: "blob bytes that do not match their declared digest or size, or an undeclared digest, are artifact_invalid and stored nowhere", Run: artifactDigestMismatch},
		Check{ID: "artifact-commit-idempotent", Group: "artifacts", Summary: "committing a committed manifest answers the same digest (201 then 200)", Run: artifactCommitIdempotent},
		Check{ID: "artifact-then-bundle-apply", Group: "artifacts", Summary: "a WorkerBundle applies only over a held WorkerBundle manifest", Run: artifactThenBundleApply},
		Check{ID: "artifact-retention-while-referenced", Group: "artifacts", Summary: "a referenced manifest and its blobs stay readable when upload sessions are abandoned", Run: artifactRetention},
		Check{ID: "upload-session-bound-to-its-creating-principal", Group: "artifacts", Summary: "another principal or tenant continuing, committing or abandoning an upload gets artifact_missing", Run: uploadSessionBound},
		Check{ID: "artifact-digest-is-not-a-capability", Group: "artifacts", Summary: "another tenant knowing a digest can neither read the manifest nor probe its blobs", Run: artifactDigestNotCapability},
		Check{ID: "manifest-reference-is-not-a-capability", Group: "artifacts", Summary: "another tenant's WorkerBundle naming a manifest it does not hold is artifact_missing", Run: manifestReferenceNotCapability},
	)
}

// rxSource is a fresh ES module exporting fetch (fresh bytes, so no
// earlier upload holds its blob).
func rxSource() []byte {
	return append(Module("fetch"), []byte("// "+randomHex(8)+"\n")...)
}

// rxBundle builds a WorkerBundle manifest of fresh modules (the first is
// the main module) and returns it, its digest and its blobs in order.
func rxBundle(names ...string) (wire.Manifest, string, [][]byte, error) {
	files := make([]artifact.ModuleFile, len(names))
	data := make([][]byte, len(names))
	for i, n := range names {
		data[i] = rxSource()
		files[i] = artifact.ModuleFile{Name: n, MediaType: artifact.MediaTypeJavaScriptModule, Data: data[i]}
	}
	m, _, err := artifact.Build(names[0], files)
	if err != nil {
		return wire.Manifest{}, "", nil, err
	}
	d, err := artifact.Digest(m)
	return *m, d, data, err
}

// rxStart starts an upload of manifest (any JSON value) raw as token.
func rxStart(ctx context.Context, e *Env, token string, manifest any) (*Raw, error) {
	raw, err := json.Marshal(manifest)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(wire.UploadRequest{Manifest: raw})
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, token, http.MethodPost, "/artifacts/uploads", map[string]string{wire.HeaderIdempotency: "start-" + randomHex(8)}, body)
}

// rxStarted decodes a successful upload start.
func rxStarted(r *Raw) (*wire.UploadStatus, error) {
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		return nil, fmt.Errorf("upload start answered HTTP %d: %s", r.Status, abbreviate(r.Body))
	}
	var st wire.UploadStatus
	if err := rxStrict(r.Body, &st); err != nil || st.MissingBlobs == nil {
		return nil, fmt.Errorf("upload start answered %s; want {uploadId, missingBlobs}", abbreviate(r.Body))
	}
	return &st, nil
}

// rxBlob PUTs bytes under digest into an upload raw as token.
func rxBlob(ctx context.Context, e *Env, token, upload, digest string, data []byte) (*Raw, error) {
	return e.Do(ctx, token, http.MethodPut, "/artifacts/uploads/"+upload+"/blobs/"+digest, map[string]string{"Content-Type": wire.ContentTypeOctets}, data)
}

// rxCommit commits an upload raw as token under a fresh key.
func rxCommit(ctx context.Context, e *Env, token, upload string) (*Raw, error) {
	return e.Do(ctx, token, http.MethodPost, "/artifacts/uploads/"+upload+"/commit", map[string]string{wire.HeaderIdempotency: "commit-" + randomHex(8)}, nil)
}

// rxCommitted checks a commit answered status with manifestDigest digest.
func rxCommitted(r *Raw, status int, digest string) error {
	var c wire.CommitResponse
	if r.Status != status || rxStrict(r.Body, &c) != nil || c.ManifestDigest != digest {
		return fmt.Errorf("commit answered HTTP %d %s; want %d {\"manifestDigest\": %q}", r.Status, abbreviate(r.Body), status, digest)
	}
	return nil
}

// rxManifestMissing checks token's tenant cannot read the manifest digest.
func rxManifestMissing(ctx context.Context, e *Env, token, digest, why string) error {
	r, err := e.Do(ctx, token, http.MethodGet, "/artifacts/"+digest, nil, nil)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactMissing); err != nil {
		return fmt.Errorf("%s: reading manifest %s: %w", why, digest, err)
	}
	return nil
}

// rxHead is a blob HEAD as token: 200 or a bare 404.
func rxHead(ctx context.Context, e *Env, token, digest string) (bool, error) {
	r, err := e.Do(ctx, token, http.MethodHead, "/artifacts/blobs/"+digest, nil, nil)
	if err != nil {
		return false, err
	}
	switch {
	case r.Status == http.StatusOK:
		return true, nil
	case r.Status == http.StatusNotFound && len(r.Body) == 0:
		return false, nil
	}
	return false, fmt.Errorf("blob HEAD answered HTTP %d with %d body bytes; want 200 or a bare 404", r.Status, len(r.Body))
}

// rxUploaded uploads and commits a fresh one-module bundle as c.
func rxUploaded(ctx context.Context, c *client.Client) (wire.Manifest, string, []byte, error) {
	m, d, data, err := rxBundle("index.js")
	if err != nil {
		return m, "", nil, err
	}
	got, err := c.UploadArtifact(ctx, m, map[string][]byte{ijson.SumDigest(data[0]): data[0]})
	if err == nil && got != d {
		err = fmt.Errorf("upload answered digest %s, want %s", got, d)
	}
	return m, d, data[0], err
}

func artifactUploadMissingBlob(ctx context.Context, e *Env) error {
	m, d, data, err := rxBundle("index.js", "util.js")
	if err != nil {
		return err
	}
	mainDigest, utilDigest := m.Modules[0].Digest, m.Modules[1].Digest
	st, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	want := []string{mainDigest, utilDigest}
	slices.Sort(want)
	got := slices.Clone(st.MissingBlobs)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("missingBlobs = %v, want both fresh blobs %v", st.MissingBlobs, want)
	}
	r, err := rxCommit(ctx, e, e.Creds.A1, st.UploadID)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactMissing); err != nil {
		return fmt.Errorf("committing with no blob uploaded: %w", err)
	}
	if err := rxManifestMissing(ctx, e, e.Creds.A1, d, "after a refused commit"); err != nil {
		return err
	}
	if err := e.A1.PutBlob(ctx, st.UploadID, mainDigest, data[0]); err != nil {
		return err
	}
	// Resuming answers the still-missing set.
	again, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	if !slices.Equal(again.MissingBlobs, []string{utilDigest}) {
		return fmt.Errorf("resumed missingBlobs = %v, want only the blob not uploaded yet %s", again.MissingBlobs, utilDigest)
	}
	if r, err = rxCommit(ctx, e, e.Creds.A1, st.UploadID); err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactMissing); err != nil {
		return fmt.Errorf("committing with one blob still missing: %w", err)
	}
	if err := e.A1.PutBlob(ctx, again.UploadID, utilDigest, data[1]); err != nil {
		return err
	}
	if r, err = rxCommit(ctx, e, e.Creds.A1, st.UploadID); err != nil {
		return err
	}
	return rxCommitted(r, http.StatusCreated, d)
}

func artifactDigestMismatch(ctx context.Context, e *Env) error {
	m, d, data, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	digest := m.Modules[0].Digest
	st, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	other := rxSource() // same length, other bytes
	cases := []struct {
		what   string
		digest string
		data   []byte
	}{
		{"bytes that hash to another digest", digest, other},
		{"bytes of another size", digest, append(slices.Clone(data[0]), ' ')},
		{"a digest the manifest does not declare", ijson.SumDigest(other), other},
	}
	for _, c := range cases {
		r, err := rxBlob(ctx, e, e.Creds.A1, st.UploadID, c.digest, c.data)
		if err != nil {
			return err
		}
		if err := r.ExpectCode(wire.ArtifactInvalid); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		for _, dg := range []string{digest, ijson.SumDigest(c.data)} {
			if held, err := rxHead(ctx, e, e.Creds.A1, dg); err != nil || held {
				return fmt.Errorf("after %s, blob %s is held (%v)", c.what, dg, err)
			}
		}
	}
	r, err := rxCommit(ctx, e, e.Creds.A1, st.UploadID)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactMissing); err != nil {
		return fmt.Errorf("committing after only refused blobs: %w", err)
	}
	if r, err = rxBlob(ctx, e, e.Creds.A1, st.UploadID, digest, data[0]); err != nil {
		return err
	}
	if r.Status != http.StatusCreated && r.Status != http.StatusNoContent {
		return fmt.Errorf("the right bytes answered HTTP %d: %s", r.Status, abbreviate(r.Body))
	}
	if r, err = rxCommit(ctx, e, e.Creds.A1, st.UploadID); err != nil {
		return err
	}
	return rxCommitted(r, http.StatusCreated, d)
}

func artifactCommitIdempotent(ctx context.Context, e *Env) error {
	m, d, data, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	st, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	if err := e.A1.PutBlob(ctx, st.UploadID, m.Modules[0].Digest, data[0]); err != nil {
		return err
	}
	key := map[string]string{wire.HeaderIdempotency: "commit-" + randomHex(8)}
	first, err := e.Do(ctx, e.Creds.A1, http.MethodPost, "/artifacts/uploads/"+st.UploadID+"/commit", key, nil)
	if err != nil {
		return err
	}
	if err := rxCommitted(first, http.StatusCreated, d); err != nil {
		return fmt.Errorf("first commit: %w", err)
	}
	replay, err := e.Do(ctx, e.Creds.A1, http.MethodPost, "/artifacts/uploads/"+st.UploadID+"/commit", key, nil)
	if err != nil {
		return err
	}
	if replay.Status != first.Status || string(replay.Body) != string(first.Body) {
		return fmt.Errorf("the replayed commit answered HTTP %d %s", replay.Status, abbreviate(replay.Body))
	}
	r, err := rxCommit(ctx, e, e.Creds.A1, st.UploadID)
	if err != nil {
		return err
	}
	if err := rxCommitted(r, http.StatusOK, d); err != nil {
		return fmt.Errorf("committing the committed upload again: %w", err)
	}
	// A new session of the same manifest, by either principal of the
	// tenant, needs no bytes and commits to the same digest.
	for _, p := range []struct {
		c     *client.Client
		token string
	}{{e.A1, e.Creds.A1}, {e.A2, e.Creds.A2}} {
		again, err := p.c.StartUpload(ctx, m)
		if err != nil {
			return err
		}
		if len(again.MissingBlobs) != 0 {
			return fmt.Errorf("a new session of a committed manifest lacks %v", again.MissingBlobs)
		}
		if r, err = rxCommit(ctx, e, p.token, again.UploadID); err != nil {
			return err
		}
		if err := rxCommitted(r, http.StatusOK, d); err != nil {
			return fmt.Errorf("committing a new session of a committed manifest: %w", err)
		}
	}
	if _, err := e.A1.Manifest(ctx, d); err != nil {
		return fmt.Errorf("reading the committed manifest: %w", err)
	}
	return nil
}

func artifactThenBundleApply(ctx context.Context, e *Env) error {
	bref, err := e.Ref("WorkerBundle")
	if err != nil {
		return err
	}
	_, d, _, err := rxUploaded(ctx, e.A1)
	if err != nil {
		return err
	}
	// A manifest the tenant never committed.
	_, uncommitted, _, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	// A committed manifest of another kind.
	html := []byte("<!doctype html><title>" + randomHex(4) + "</title>\n")
	assets := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: artifact.KindStaticAssetBundle,
		Files: []wire.ManifestFile{{Path: "index.html", MediaType: "text/html", Size: int64(len(html)), Digest: ijson.SumDigest(html)}}}
	assetDigest, err := e.A1.UploadArtifact(ctx, assets, map[string][]byte{ijson.SumDigest(html): html})
	if err != nil {
		return fmt.Errorf("upload a StaticAssetBundle: %w", err)
	}
	for _, c := range []struct {
		what, digest string
		code         wire.Code
	}{
		{"a manifest never committed", uncommitted, wire.ArtifactMissing},
		{"a committed StaticAssetBundle manifest", assetDigest, wire.ArtifactInvalid},
	} {
		name := e.Name("bundle")
		_, err := e.Create(ctx, e.A1, "WorkerBundle", name, map[string]any{"manifestDigest": c.digest})
		if err := ExpectCode(err, c.code); err != nil {
			return fmt.Errorf("a WorkerBundle naming %s: %w", c.what, err)
		}
		if err := rxAbsent(ctx, e, e.A1, bref, name, c.what); err != nil {
			return err
		}
	}
	b, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": d})
	if err != nil {
		return fmt.Errorf("a WorkerBundle over its committed manifest: %w", err)
	}
	var spec struct {
		ManifestDigest string `json:"manifestDigest"`
	}
	if err := json.Unmarshal(b.Spec, &spec); err != nil || spec.ManifestDigest != d {
		return fmt.Errorf("the bundle's spec is %s, want manifestDigest %s", b.Spec, d)
	}
	// The other principal of the tenant references it too.
	if _, err := e.Create(ctx, e.A2, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": d}); err != nil {
		return fmt.Errorf("the second principal referencing the tenant's manifest: %w", err)
	}
	return nil
}

func artifactRetention(ctx context.Context, e *Env) error {
	m, d, data, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	blob := m.Modules[0].Digest
	st, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	if err := e.A1.PutBlob(ctx, st.UploadID, blob, data[0]); err != nil {
		return err
	}
	if _, err := e.A1.CommitUpload(ctx, st.UploadID, d); err != nil {
		return err
	}
	bundle, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": d})
	if err != nil {
		return err
	}
	// Abandon the committed session itself, and an unrelated one with
	// staged bytes.
	if err := e.A1.AbandonUpload(ctx, st.UploadID); err != nil {
		return fmt.Errorf("abandon the committed session: %w", err)
	}
	um, _, udata, err := rxBundle("unrelated.js")
	if err != nil {
		return err
	}
	ust, err := e.A1.StartUpload(ctx, um)
	if err != nil {
		return err
	}
	if err := e.A1.PutBlob(ctx, ust.UploadID, um.Modules[0].Digest, udata[0]); err != nil {
		return err
	}
	if err := e.A1.AbandonUpload(ctx, ust.UploadID); err != nil {
		return fmt.Errorf("abandon an unrelated session: %w", err)
	}
	if _, err := e.A1.Manifest(ctx, d); err != nil {
		return fmt.Errorf("the referenced manifest after abandons: %w", err)
	}
	if held, err := e.A1.HeadBlob(ctx, blob); err != nil || !held {
		return fmt.Errorf("the referenced blob after abandons: held %v (%v)", held, err)
	}
	if _, err := e.A1.Read(ctx, Addr(bundle)); err != nil {
		return fmt.Errorf("the referencing bundle after abandons: %w", err)
	}
	// It still backs new revisions.
	if _, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": d}); err != nil {
		return fmt.Errorf("a new bundle over the retained manifest: %w", err)
	}
	return nil
}
