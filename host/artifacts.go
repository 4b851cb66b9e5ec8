package host

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// ArtifactLimits are the host's manifest limits (support profile
// limits.maximumBundleBytes).
var ArtifactLimits = edgehost.DefaultArtifactLimits

// uploadLimits are the manifest rules an upload started or committed on
// r's lane is held to: ArtifactLimits, and on lane v1beta1 also the
// MigrationBundle media type rule (spec/lane-v1beta1.md §3.6), so lane
// v1alpha3 answers exactly as before. The lane is the request's: a commit
// under the v1beta1 base is v1beta1-bound work.
func uploadLimits(r *request) artifact.Limits {
	if r.lane == nil {
		return ArtifactLimits
	}
	return edgehost.LimitsFor(ArtifactLimits, r.lane.EdgeGroup)
}

// artifactError maps an artifact rule violation to artifact_invalid.
func artifactError(err error) error {
	var ae *artifact.Error
	if errors.As(err, &ae) {
		return wire.Errorf(wire.ArtifactInvalid, "%s", ae.Error()).WithHostCode(strings.ReplaceAll(ae.Rule, ".", "_")).WithDetail("pointer", ae.Pointer)
	}
	return wire.Errorf(wire.ArtifactInvalid, "%v", err)
}

// manifestEntries lists a manifest's (digest, size) entries.
func manifestEntries(m *wire.Manifest) (digests []string, sizes map[string]int64) {
	sizes = map[string]int64{}
	add := func(d string, n int64) {
		if _, ok := sizes[d]; !ok {
			digests = append(digests, d)
		}
		sizes[d] = n
	}
	for _, e := range m.Modules {
		add(e.Digest, e.Size)
	}
	for _, e := range m.Files {
		add(e.Digest, e.Size)
	}
	return digests, sizes
}

// startUpload answers POST /artifacts/uploads (spec/host-api-v1alpha3.md §3.6 step 1).
func (s *Server) startUpload(r *request) (answer, error) {
	var req wire.UploadRequest
	if err := decodeBody(r.body, &req); err != nil {
		return answer{}, err
	}
	m, err := artifact.ParseManifest(req.Manifest)
	if err != nil {
		return answer{}, artifactError(err)
	}
	if err := artifact.Verify(m, uploadLimits(r)); err != nil {
		return answer{}, artifactError(err)
	}
	digest, err := artifact.Digest(m)
	if err != nil {
		return answer{}, artifactError(err)
	}
	canonical, err := ijson.Canonical(mustJSON(m))
	if err != nil {
		return answer{}, err
	}
	var out answer
	err = s.update(r, func(tx store.Tx) error {
		up := &store.Upload{ID: "up_" + randomHex(12), Lane: r.lane.Name, Tenant: r.caller.Tenant, Principal: r.caller.Principal, Manifest: canonical, ManifestDigest: digest, CreatedAt: s.cfg.Now()}
		if err := tx.PutUpload(up); err != nil {
			return err
		}
		digests, _ := manifestEntries(m)
		if err := tx.ReplaceArtifactRefs(store.UploadHolder(up.ID), digests); err != nil {
			return err
		}
		missing := []string{}
		for _, d := range digests {
			held, err := tx.Holds(r.caller.Tenant, d)
			if err != nil {
				return err
			}
			if !held {
				missing = append(missing, d)
			}
		}
		sort.Strings(missing)
		out = jsonAnswer(201, wire.UploadStatus{UploadID: up.ID, MissingBlobs: missing})
		return s.record(tx, r, out, "", "")
	})
	return out, err
}

// ownedUpload loads an upload the caller (tenant and principal) started
// on the request's lane; anyone else's, and one of another lane
// (spec/lane-v1beta1.md §2.5 rule 4), is answered like an unknown id.
func ownedUpload(tx store.Tx, r *request) (*store.Upload, *wire.Manifest, error) {
	id := r.PathValue("upload")
	up, err := tx.Upload(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (up.Tenant != r.caller.Tenant || up.Principal != r.caller.Principal || up.Lane != r.lane.Name)) {
		return nil, nil, wire.Errorf(wire.ArtifactMissing, "upload %q is unknown or not yours; start an upload first", id)
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := artifact.ParseManifest(up.Manifest)
	if err != nil {
		return nil, nil, err
	}
	return up, m, nil
}

// putBlob answers PUT /artifacts/uploads/{id}/blobs/{sha256}: the bytes
// are checked against the declared size and digest on receipt.
func (s *Server) putBlob(r *request) (answer, error) {
	digest := r.PathValue("digest")
	var out answer
	err := s.cfg.Store.Update(context.WithoutCancel(r.Context()), func(tx store.Tx) error {
		_, m, err := ownedUpload(tx, r)
		if err != nil {
			return err
		}
		_, sizes := manifestEntries(m)
		size, declared := sizes[digest]
		if !declared {
			return wire.Errorf(wire.ArtifactInvalid, "blob %s is not declared by the upload's manifest", digest).WithHostCode("blob_undeclared")
		}
		if err := artifact.VerifyBlob(digest, size, r.body); err != nil {
			return artifactError(err)
		}
		held, err := tx.Holds(r.caller.Tenant, digest)
		if err != nil {
			return err
		}
		if !held {
			if err := s.engine.CheckArtifactQuota(tx, r.caller.Tenant, size); err != nil {
				return err
			}
		}
		if _, err := tx.BlobSize(digest); errors.Is(err, store.ErrNotFound) {
			if err := tx.PutBlob(digest, r.body); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if err := tx.Hold(r.caller.Tenant, digest); err != nil {
			return err
		}
		out = answer{status: 201}
		if held {
			out.status = 204
		}
		return nil
	})
	return out, err
}

// commitUpload answers POST /artifacts/uploads/{id}/commit: every manifest
// rule is re-verified and every blob must be held (spec/host-api-v1alpha3.md §3.6 step 3).
func (s *Server) commitUpload(r *request) (answer, error) {
	if len(r.body) > 0 {
		return answer{}, wire.Errorf(wire.InvalidArgument, "commit takes an empty body")
	}
	var out answer
	err := s.update(r, func(tx store.Tx) error {
		up, m, err := ownedUpload(tx, r)
		if err != nil {
			return err
		}
		if err := artifact.Verify(m, uploadLimits(r)); err != nil {
			return artifactError(err)
		}
		digests, sizes := manifestEntries(m)
		for _, d := range digests {
			held, err := tx.Holds(r.caller.Tenant, d)
			if err != nil {
				return err
			}
			n, err := tx.BlobSize(d)
			if !held || errors.Is(err, store.ErrNotFound) {
				return wire.Errorf(wire.ArtifactMissing, "blob %s was never uploaded; upload it before committing", d).WithHostCode("blob_missing")
			}
			if err != nil {
				return err
			}
			if n != sizes[d] {
				return wire.Errorf(wire.ArtifactInvalid, "blob %s holds %d bytes; the manifest declares %d", d, n, sizes[d]).WithHostCode("blob_size")
			}
		}
		code := 201
		if held, err := tx.Holds(r.caller.Tenant, up.ManifestDigest); err != nil {
			return err
		} else if held {
			code = 200
		}
		if err := tx.PutManifest(up.ManifestDigest, up.Manifest); err != nil {
			return err
		}
		if err := tx.ReplaceArtifactRefs(store.ManifestHolder(up.ManifestDigest), digests); err != nil {
			return err
		}
		if err := tx.Hold(r.caller.Tenant, up.ManifestDigest); err != nil {
			return err
		}
		out = jsonAnswer(code, wire.CommitResponse{ManifestDigest: up.ManifestDigest})
		return s.record(tx, r, out, "", "")
	})
	return out, err
}

// manifest answers GET /artifacts/{manifestDigest} for a tenant holding it.
func (s *Server) manifest(r *request) (answer, error) {
	digest := r.PathValue("digest")
	var doc []byte
	err := s.cfg.Store.View(r.Context(), func(tx store.Tx) error {
		held, err := tx.Holds(r.caller.Tenant, digest)
		if err != nil {
			return err
		}
		if held {
			doc, err = tx.Manifest(digest)
		}
		if !held || errors.Is(err, store.ErrNotFound) {
			return wire.Errorf(wire.ArtifactMissing, "manifest %s is not held by this tenant", digest)
		}
		return err
	})
	if err != nil {
		return answer{}, err
	}
	return answer{status: 200, body: doc}, nil
}

// headBlob answers HEAD /artifacts/blobs/{sha256}: 200 when the tenant
// holds the blob, a bare 404 otherwise.
func (s *Server) headBlob(r *request) (answer, error) {
	digest := r.PathValue("digest")
	found := false
	err := s.cfg.Store.View(r.Context(), func(tx store.Tx) error {
		held, err := tx.Holds(r.caller.Tenant, digest)
		if err != nil || !held {
			return err
		}
		_, err = tx.BlobSize(digest)
		found = err == nil
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return answer{}, err
	}
	if !found {
		return answer{status: 404}, nil
	}
	return answer{status: 200}, nil
}

// abandonUpload answers DELETE /artifacts/uploads/{id}; held bytes stay.
func (s *Server) abandonUpload(r *request) (answer, error) {
	var out answer
	err := s.update(r, func(tx store.Tx) error {
		up, _, err := ownedUpload(tx, r)
		if err != nil {
			return err
		}
		if err := tx.DeleteUpload(up.ID); err != nil {
			return err
		}
		out = answer{status: 204}
		return s.record(tx, r, out, "", "")
	})
	return out, err
}
