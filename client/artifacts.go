package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Artifact manifest kinds (spec/host-api-v1alpha3.md §3.6).
var manifestKinds = map[string]bool{"WorkerBundle": true, "StaticAssetBundle": true, "MigrationBundle": true}

// ManifestDigest is the manifest's content address: ijson.DigestValue of
// the manifest (RFC 8785 + SHA-256, spec/host-api-v1alpha3.md §3.6).
func ManifestDigest(m wire.Manifest) (string, error) {
	return ijson.DigestValue(m)
}

// manifestBlobs maps each digest the manifest names to its declared size.
func manifestBlobs(m wire.Manifest) (map[string]int64, error) {
	if m.APIVersion != wire.ArtifactsAPI || !manifestKinds[m.Kind] {
		return nil, fmt.Errorf("manifest apiVersion %q kind %q; want %s and WorkerBundle, StaticAssetBundle or MigrationBundle", m.APIVersion, m.Kind, wire.ArtifactsAPI)
	}
	out := map[string]int64{}
	add := func(d string, size int64) error {
		if !ijson.ValidDigest(d) {
			return fmt.Errorf("manifest digest %q is not a digest", d)
		}
		if prev, ok := out[d]; ok && prev != size {
			return fmt.Errorf("manifest names %s with sizes %d and %d", d, prev, size)
		}
		out[d] = size
		return nil
	}
	for _, e := range m.Modules {
		if err := add(e.Digest, e.Size); err != nil {
			return nil, err
		}
	}
	for _, e := range m.Files {
		if err := add(e.Digest, e.Size); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// StartUpload opens an upload session for manifest (route 12, POST
// {api}/artifacts/uploads {"manifest": …}; spec/host-api-v1alpha3.md §3.6). The key is
// DeriveKey(KeyUploadStart, manifestDigest, random nonce), so every start
// is a fresh session answering the blobs this tenant still lacks. Every
// missing blob must be one the manifest names.
func (c *Client) StartUpload(ctx context.Context, manifest wire.Manifest) (*wire.UploadStatus, error) {
	named, err := manifestBlobs(manifest)
	if err != nil {
		return nil, fmt.Errorf("takoform: artifact-upload-start: %w", err)
	}
	digest, err := ManifestDigest(manifest)
	if err != nil {
		return nil, fmt.Errorf("takoform: artifact-upload-start: %w", err)
	}
	raw, err := encodeBody("artifact-upload-start", manifest)
	if err != nil {
		return nil, err
	}
	body, err := encodeBody("artifact-upload-start", wire.UploadRequest{Manifest: raw})
	if err != nil {
		return nil, err
	}
	r := jsonRequest("artifact-upload-start", http.MethodPost, c.lane.APIBase+"/artifacts/uploads", body)
	r.mutation, r.key = true, DeriveKey(KeyUploadStart, digest, nonce())
	resp, err := c.send(ctx, r)
	if err == nil {
		err = c.expectStatus(r, resp, http.StatusOK, http.StatusCreated)
	}
	if err != nil {
		return nil, err
	}
	var out wire.UploadStatus
	if err := c.decodeAnswer(r, resp, &out, "upload status", "/uploadId", "/missingBlobs"); err != nil {
		return nil, err
	}
	if !uploadPattern.MatchString(out.UploadID) {
		return nil, c.protocolError(r, resp.status, fmt.Sprintf("uploadId %q is not an upload id", out.UploadID), nil)
	}
	seen := map[string]bool{}
	for _, d := range out.MissingBlobs {
		if _, ok := named[d]; !ok || seen[d] {
			return nil, c.protocolError(r, resp.status, fmt.Sprintf("missingBlobs names %q, which the manifest does not name or which repeats", d), nil)
		}
		seen[d] = true
	}
	return &out, nil
}

func (c *Client) uploadPath(id, suffix string) (string, error) {
	if !uploadPattern.MatchString(id) {
		return "", fmt.Errorf("takoform: %q is not an upload id (up_…)", id)
	}
	p, err := c.apiPath("/artifacts/uploads", [2]string{"upload id", id})
	return p + suffix, err
}

// PutBlob uploads one blob's bytes (route 13, PUT
// {api}/artifacts/uploads/{uploadId}/blobs/{sha256}; spec/host-api-v1alpha3.md §3.6). digest
// must be ijson.SumDigest(data); it is checked before sending. The answer
// is 201 or 204 with an empty body. No Idempotency-Key: the upload is
// content-addressed.
func (c *Client) PutBlob(ctx context.Context, uploadID, digest string, data []byte) error {
	if ijson.SumDigest(data) != digest {
		return fmt.Errorf("takoform: artifact-blob-upload: the bytes digest to %s, not %s", ijson.SumDigest(data), digest)
	}
	path, err := c.uploadPath(uploadID, "/blobs")
	if err != nil {
		return err
	}
	seg, err := segment("digest", digest)
	if err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	r := &request{op: "artifact-blob-upload", method: http.MethodPut, path: path + "/" + seg, body: data, ctype: wire.ContentTypeOctets, mutation: true}
	resp, err := c.send(ctx, r)
	if err == nil {
		err = c.expectStatus(r, resp, http.StatusCreated, http.StatusNoContent)
	}
	if err == nil {
		err = c.expectEmpty(r, resp)
	}
	return err
}

// Commit is the answer of CommitUpload: the committed manifest digest, or
// an accepted operation (202) whose result carries it.
type Commit struct {
	Status         int             // 200, 201 or 202
	ManifestDigest string          // the committed digest of a 200/201
	Operation      *wire.Operation // the accepted operation of a 202
	retryAfter     string
}

// CommitUpload commits an upload (route 14, POST
// {api}/artifacts/uploads/{uploadId}/commit, Idempotency-Key
// DeriveKey(KeyCommit, uploadID, manifestDigest); spec/host-api-v1alpha3.md §3.6). The answer
// (201 first time, 200 again, or 202) must name manifestDigest.
func (c *Client) CommitUpload(ctx context.Context, uploadID, manifestDigest string) (*Commit, error) {
	if !ijson.ValidDigest(manifestDigest) {
		return nil, fmt.Errorf("takoform: artifact-commit: %q is not a digest", manifestDigest)
	}
	path, err := c.uploadPath(uploadID, "/commit")
	if err != nil {
		return nil, err
	}
	r := &request{op: "artifact-commit", method: http.MethodPost, path: path, mutation: true, key: DeriveKey(KeyCommit, uploadID, manifestDigest)}
	resp, err := c.send(ctx, r)
	if err == nil {
		err = c.expectStatus(r, resp, http.StatusOK, http.StatusCreated, http.StatusAccepted)
	}
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusAccepted {
		m, err := c.accepted(r, resp, expectation{})
		if err != nil {
			return nil, err
		}
		return &Commit{Status: resp.status, Operation: m.Operation, retryAfter: m.retryAfter}, nil
	}
	var out wire.CommitResponse
	if err := c.decodeAnswer(r, resp, &out, "commit response", "/manifestDigest"); err != nil {
		return nil, err
	}
	if out.ManifestDigest != manifestDigest {
		return nil, c.protocolError(r, resp.status, fmt.Sprintf("the commit names %q, not the manifest %s", out.ManifestDigest, manifestDigest), nil)
	}
	return &Commit{Status: resp.status, ManifestDigest: out.ManifestDigest}, nil
}

// Manifest reads a committed manifest (route 15, GET
// {api}/artifacts/{manifestDigest}; spec/host-api-v1alpha3.md §3.6). The body must digest to
// manifestDigest: a content address cannot be substituted.
func (c *Client) Manifest(ctx context.Context, manifestDigest string) (*wire.Manifest, error) {
	if !ijson.ValidDigest(manifestDigest) {
		return nil, fmt.Errorf("takoform: artifact-manifest-read: %q is not a digest", manifestDigest)
	}
	path, err := c.apiPath("/artifacts", [2]string{"digest", manifestDigest})
	if err != nil {
		return nil, err
	}
	r := &request{op: "artifact-manifest-read", method: http.MethodGet, path: path}
	resp, err := c.sendOK(ctx, r)
	if err != nil {
		return nil, err
	}
	var m wire.Manifest
	if err := c.decodeAnswer(r, resp, &m, "manifest"); err != nil {
		return nil, err
	}
	if d, err := ijson.Digest(resp.body); err != nil || d != manifestDigest {
		return nil, c.protocolError(r, resp.status, fmt.Sprintf("the manifest digests to %s, not %s", d, manifestDigest), err)
	}
	return &m, nil
}

// HeadBlob reports whether the caller's tenant holds a blob (route 16,
// HEAD {api}/artifacts/blobs/{sha256}; spec/host-api-v1alpha3.md §3.6): 200 true, a bare 404
// false. Any other status is a *ProtocolError (a HEAD answer carries no
// envelope); it is never retried.
func (c *Client) HeadBlob(ctx context.Context, digest string) (bool, error) {
	if !ijson.ValidDigest(digest) {
		return false, fmt.Errorf("takoform: artifact-blob-head: %q is not a digest", digest)
	}
	path, err := c.apiPath("/artifacts/blobs", [2]string{"digest", digest})
	if err != nil {
		return false, err
	}
	r := &request{op: "artifact-blob-head", method: http.MethodHead, path: path}
	resp, err := c.roundTrip(ctx, r)
	if err != nil {
		return false, err
	}
	switch resp.status {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, c.protocolError(r, resp.status, "a blob HEAD answers 200 or 404", nil)
}

// AbandonUpload discards an upload session (route 17, DELETE
// {api}/artifacts/uploads/{uploadId}, Idempotency-Key
// DeriveKey(KeyAbandon, uploadID); spec/host-api-v1alpha3.md §3.6): 204, empty body.
func (c *Client) AbandonUpload(ctx context.Context, uploadID string) error {
	path, err := c.uploadPath(uploadID, "")
	if err != nil {
		return err
	}
	r := &request{op: "artifact-upload-abandon", method: http.MethodDelete, path: path, mutation: true, key: DeriveKey(KeyAbandon, uploadID)}
	resp, err := c.send(ctx, r)
	if err == nil {
		err = c.expectStatus(r, resp, http.StatusNoContent)
	}
	if err == nil {
		err = c.expectEmpty(r, resp)
	}
	return err
}

// UploadArtifact uploads a manifest and its blobs (spec/host-api-v1alpha3.md §3.6): start,
// put each blob the host reports missing, commit, and wait when the commit
// answers 202. blobs maps each digest ("sha256:…") to its bytes; every
// supplied blob must digest to its key and have the size the manifest
// declares, and every missing blob must be supplied. It returns the
// manifest digest. A failure after the start leaves the session for the
// host to expire; the error names the step.
func (c *Client) UploadArtifact(ctx context.Context, manifest wire.Manifest, blobs map[string][]byte) (string, error) {
	named, err := manifestBlobs(manifest)
	if err != nil {
		return "", fmt.Errorf("takoform: upload artifact: %w", err)
	}
	for d, b := range blobs {
		size, ok := named[d]
		switch {
		case !ok:
			return "", fmt.Errorf("takoform: upload artifact: blob %s is not named by the manifest", d)
		case ijson.SumDigest(b) != d:
			return "", fmt.Errorf("takoform: upload artifact: the bytes given for %s digest to %s", d, ijson.SumDigest(b))
		case int64(len(b)) != size:
			return "", fmt.Errorf("takoform: upload artifact: blob %s has %d bytes; the manifest declares %d", d, len(b), size)
		}
	}
	digest, err := ManifestDigest(manifest)
	if err != nil {
		return "", fmt.Errorf("takoform: upload artifact: %w", err)
	}
	up, err := c.StartUpload(ctx, manifest)
	if err != nil {
		return "", err
	}
	for _, d := range up.MissingBlobs {
		b, ok := blobs[d]
		if !ok {
			return "", fmt.Errorf("takoform: upload artifact: the host lacks blob %s and no bytes were given for it (upload %s)", d, up.UploadID)
		}
		if err := c.PutBlob(ctx, up.UploadID, d, b); err != nil {
			return "", err
		}
	}
	cm, err := c.CommitUpload(ctx, up.UploadID, digest)
	if err != nil {
		return "", err
	}
	if cm.Operation == nil {
		return cm.ManifestDigest, nil
	}
	op, err := c.wait(ctx, cm.Operation.ID, cm.Operation, cm.retryAfter)
	if err != nil {
		return "", err
	}
	var res wire.CommitResponse
	if err := decodeStrict(op.Result, &res, "/manifestDigest"); err != nil || res.ManifestDigest != digest {
		return "", &ProtocolError{Op: "operation " + op.ID, Reason: fmt.Sprintf("the commit result is not the manifest %s", digest), Err: err}
	}
	return digest, nil
}
