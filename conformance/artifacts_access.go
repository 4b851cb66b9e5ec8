package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/takoform/takoform/wire"
)

func uploadSessionBound(ctx context.Context, e *Env) error {
	m, d, data, err := rxBundle("index.js")
	if err != nil {
		return err
	}
	blob := m.Modules[0].Digest
	st, err := e.A1.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	unknown := "up_" + randomHex(12)
	for _, who := range []struct{ label, token string }{
		{"the second principal of the tenant", e.Creds.A2}, {"another tenant", e.Creds.B}, {"the owner, for an unknown id", e.Creds.A1},
	} {
		id := st.UploadID
		if who.token == e.Creds.A1 {
			id = unknown
		}
		put, err := rxBlob(ctx, e, who.token, id, blob, data[0])
		if err != nil {
			return err
		}
		if err := put.ExpectCode(wire.ArtifactMissing); err != nil {
			return fmt.Errorf("%s uploading a blob: %w", who.label, err)
		}
		commit, err := rxCommit(ctx, e, who.token, id)
		if err != nil {
			return err
		}
		if err := commit.ExpectCode(wire.ArtifactMissing); err != nil {
			return fmt.Errorf("%s committing: %w", who.label, err)
		}
		abandon, err := e.Do(ctx, who.token, http.MethodDelete, "/artifacts/uploads/"+id, map[string]string{wire.HeaderIdempotency: "abandon-" + randomHex(8)}, nil)
		if err != nil {
			return err
		}
		if err := abandon.ExpectCode(wire.ArtifactMissing); err != nil {
			return fmt.Errorf("%s abandoning: %w", who.label, err)
		}
	}
	// The strangers' refused blob gave the tenant nothing.
	if held, err := rxHead(ctx, e, e.Creds.A1, blob); err != nil || held {
		return fmt.Errorf("after refused uploads the blob is held (%v)", err)
	}
	// The owner's session is intact.
	if err := e.A1.PutBlob(ctx, st.UploadID, blob, data[0]); err != nil {
		return fmt.Errorf("the owner uploading after strangers were refused: %w", err)
	}
	r, err := rxCommit(ctx, e, e.Creds.A1, st.UploadID)
	if err != nil {
		return err
	}
	return rxCommitted(r, http.StatusCreated, d)
}

func artifactDigestNotCapability(ctx context.Context, e *Env) error {
	m, d, data, err := rxUploaded(ctx, e.A1)
	if err != nil {
		return err
	}
	blob := m.Modules[0].Digest
	if err := rxManifestMissing(ctx, e, e.Creds.B, d, "another tenant"); err != nil {
		return err
	}
	if held, err := rxHead(ctx, e, e.Creds.B, blob); err != nil || held {
		return fmt.Errorf("another tenant probing the blob: held %v (%v)", held, err)
	}
	// Holding is the tenant's: the other principal reads it.
	if _, err := e.A2.Manifest(ctx, d); err != nil {
		return fmt.Errorf("the second principal of the tenant reading the manifest: %w", err)
	}
	// missingBlobs is per tenant: B must bring the bytes itself.
	st, err := e.B.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	if !slices.Equal(st.MissingBlobs, []string{blob}) {
		return fmt.Errorf("another tenant's missingBlobs = %v, want %s: a digest it never uploaded", st.MissingBlobs, blob)
	}
	r, err := rxCommit(ctx, e, e.Creds.B, st.UploadID)
	if err != nil {
		return err
	}
	if err := r.ExpectCode(wire.ArtifactMissing); err != nil {
		return fmt.Errorf("another tenant committing without the bytes: %w", err)
	}
	// A session B abandons removes nothing A holds.
	if err := e.B.AbandonUpload(ctx, st.UploadID); err != nil {
		return err
	}
	if held, err := e.A1.HeadBlob(ctx, blob); err != nil || !held {
		return fmt.Errorf("after another tenant abandoned a session naming it, the blob is held %v (%v)", held, err)
	}
	// With the bytes, B commits the same manifest as its own (201: first
	// time for B).
	st, err = e.B.StartUpload(ctx, m)
	if err != nil {
		return err
	}
	if err := e.B.PutBlob(ctx, st.UploadID, blob, data); err != nil {
		return err
	}
	if r, err = rxCommit(ctx, e, e.Creds.B, st.UploadID); err != nil {
		return err
	}
	if err := rxCommitted(r, http.StatusCreated, d); err != nil {
		return fmt.Errorf("another tenant committing with its own bytes: %w", err)
	}
	if _, err := e.B.Manifest(ctx, d); err != nil {
		return err
	}
	return nil
}

func manifestReferenceNotCapability(ctx context.Context, e *Env) error {
	bref, err := e.Ref("WorkerBundle")
	if err != nil {
		return err
	}
	_, d, _, err := rxUploaded(ctx, e.A1)
	if err != nil {
		return err
	}
	spec := map[string]any{"manifestDigest": d}
	name := e.Name("bundle")
	_, err = e.Create(ctx, e.B, "WorkerBundle", name, spec)
	if err := ExpectCode(err, wire.ArtifactMissing); err != nil {
		return fmt.Errorf("another tenant applying a WorkerBundle naming the manifest: %w", err)
	}
	if err := rxAbsent(ctx, e, e.B, bref, name, "another tenant's refused bundle"); err != nil {
		return err
	}
	if err := rxImportRefused(ctx, e, e.Creds.B, e.Space, bref, name, spec, "native-"+randomHex(8), "", wire.ArtifactMissing, nil); err != nil {
		return fmt.Errorf("another tenant importing a WorkerBundle naming the manifest: %w", err)
	}
	// The owner's tenant references it, under the same name.
	if _, err := e.Create(ctx, e.A1, "WorkerBundle", name, spec); err != nil {
		return fmt.Errorf("the holder's bundle: %w", err)
	}
	return nil
}
