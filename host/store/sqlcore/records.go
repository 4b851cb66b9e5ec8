package sqlcore

import (
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Idempotency records (spec/host-api-v1alpha3.md §3.5) ---

// Idempotency returns the record keyed (lane, tenant, principal, space, key), or
// an error wrapping store.ErrNotFound.
func (c Core) Idempotency(lane, tenant, principal, space, key string) (*store.Idempotency, error) {
	lock := IdempotencyLock(lane, tenant, principal, space, key)
	r, err := sqlrow.ScanIdempotencyAt(c.X.ReadLocked(lock, Idempotency, bind(lane, tenant, principal, space, key)), store.IdempotencyKey{Lane: lane, Tenant: tenant, Principal: principal, Space: space, Key: key})
	c.X.ReadAbsent(lock, err)
	if err != nil {
		return nil, NotFound(err, fmt.Sprintf("read idempotency record %s/%s/%s/%s/%q", lane, tenant, principal, space, key))
	}
	return r, nil
}

// PutIdempotency inserts r or replaces the record with its key, under the
// key's lock.
func (c Core) PutIdempotency(r *store.Idempotency) error {
	lock := IdempotencyLock(r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
	if _, err := c.X.ExecLocked(lock, PutIdempotency, bind(sqlrow.IdempotencyArgs(r)...)); err != nil {
		return fmt.Errorf("put idempotency record %s/%s/%s/%s/%q: %w", r.Lane, r.Tenant, r.Principal, r.Space, r.Key, err)
	}
	return nil
}

// RetireIdempotency deletes the records bound to uid and returns how many;
// an empty uid retires nothing (records bound to nothing keep replaying).
func (c Core) RetireIdempotency(uid string) (int, error) {
	if uid == "" {
		return 0, nil
	}
	n, err := c.X.Exec(RetireIdempotency, bind(uid))
	if err != nil {
		return 0, fmt.Errorf("retire idempotency records bound to %s: %w", uid, err)
	}
	return int(n), nil
}

// ExpireIdempotency deletes the records created strictly before before and
// returns how many.
func (c Core) ExpireIdempotency(before time.Time) (int, error) {
	n, err := c.X.Exec(ExpireIdempotency, bind(sqlrow.UnixNano(before)))
	if err != nil {
		return 0, fmt.Errorf("expire idempotency records before %s: %w", before.Format(time.RFC3339Nano), err)
	}
	return int(n), nil
}

// RebindIdempotency moves every record bound to operationID onto uid (""
// binds them to nothing): a settled 202 follows its operation's outcome
// (spec/host-api-v1alpha3.md §3.5). The records are then no longer bound
// to the operation.
func (c Core) RebindIdempotency(operationID, uid string) error {
	if operationID == "" {
		return nil
	}
	if _, err := c.X.Exec(RebindIdempotency, bind(uid, operationID)); err != nil {
		return fmt.Errorf("rebind idempotency records of operation %s to uid %q: %w", operationID, uid, err)
	}
	return nil
}

// --- Operations (spec/host-api-v1alpha3.md §4) ---

// Operation returns the operation with id, or an error wrapping
// store.ErrNotFound.
func (c Core) Operation(id string) (*store.Operation, error) {
	op, err := sqlrow.ScanOperation(c.X.ReadLocked(Lock{}, Operation, bind(id)))
	if err != nil {
		return nil, NotFound(err, "read operation "+id)
	}
	return op, nil
}

// PutOperation inserts op or replaces the operation with its ID.
func (c Core) PutOperation(op *store.Operation) error {
	if _, err := c.X.Exec(PutOperation, bind(sqlrow.OperationArgs(op)...)); err != nil {
		return fmt.Errorf("put operation %s: %w", op.ID, err)
	}
	return nil
}

// DueOperations returns up to limit unfinished operations whose NotBefore
// is at or before now, longest due first: by NotBefore, then CreatedAt,
// then ID. A zero NotBefore is always due.
func (c Core) DueOperations(now time.Time, limit int) ([]*store.Operation, error) {
	var ops []*store.Operation
	err := c.X.Query(DueOperations, func(row sqlrow.Scanner) error {
		op, err := sqlrow.ScanOperation(row)
		if err == nil {
			ops = append(ops, op)
		}
		return err
	}, bind(sqlrow.UnixNano(now), limit))
	if err != nil {
		return nil, fmt.Errorf("list operations due at %s: %w", now.Format(time.RFC3339Nano), err)
	}
	return ops, nil
}

// PendingOperationFor returns the oldest (by CreatedAt, then ID)
// unfinished operation whose Target is k, or an error wrapping
// store.ErrNotFound.
func (c Core) PendingOperationFor(k store.Key) (*store.Operation, error) {
	op, err := sqlrow.ScanPendingOperation(c.X.QueryRow(PendingOperation, bind(k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name)), k)
	if err != nil {
		return nil, NotFound(err, "read pending operation for "+sqlrow.KeyString(k))
	}
	return op, nil
}

// --- Artifacts (spec/host-api-v1alpha3.md §3.6) ---

// BlobSize returns the size in bytes of the blob with digest, or an error
// wrapping store.ErrNotFound.
func (c Core) BlobSize(digest string) (int64, error) {
	var n int64
	if err := c.X.ReadLocked(ArtifactLock(digest), BlobSize, bind(digest)).Scan(&n); err != nil {
		return 0, NotFound(err, "read size of blob "+digest)
	}
	return n, nil
}

// Blob returns the bytes of the blob with digest, or an error wrapping
// store.ErrNotFound.
func (c Core) Blob(digest string) ([]byte, error) {
	var b []byte
	if err := c.X.ReadLocked(ArtifactLock(digest), Blob, bind(digest)).Scan(&b); err != nil {
		return nil, NotFound(err, "read blob "+digest)
	}
	return b, nil
}

// PutBlob stores data under digest once, under the digest's lock;
// storing a digest again keeps the first bytes (the caller has verified
// the digest) and restarts its retention age (SweepArtifacts).
func (c Core) PutBlob(digest string, data []byte) error {
	if err := c.X.Lock(ArtifactLock(digest)); err != nil {
		return fmt.Errorf("put blob %s: %w", digest, err)
	}
	if _, err := c.X.Exec(PutBlob, bind(digest, len(data), sqlrow.Blob(data), time.Now().UnixNano())); err != nil {
		return fmt.Errorf("put blob %s (%d bytes): %w", digest, len(data), err)
	}
	return nil
}

// Holds reports whether tenant holds digest (a blob or manifest).
func (c Core) Holds(tenant, digest string) (bool, error) {
	var one int
	err := c.X.ReadLocked(ArtifactLock(digest), Holds, bind(tenant, digest)).Scan(&one)
	switch {
	case err == nil:
		return true, nil
	case NoRows(err):
		return false, nil
	}
	return false, fmt.Errorf("read holding of %s by tenant %s: %w", digest, tenant, err)
}

// Hold records that tenant holds digest; holding it again is a no-op.
func (c Core) Hold(tenant, digest string) error {
	if err := c.X.Lock(ArtifactLock(digest)); err != nil {
		return fmt.Errorf("record holding of %s by tenant %s: %w", digest, tenant, err)
	}
	if _, err := c.X.Exec(Hold, bind(tenant, digest)); err != nil {
		return fmt.Errorf("record holding of %s by tenant %s: %w", digest, tenant, err)
	}
	return nil
}

// Manifest returns the canonical manifest JSON with digest, or an error
// wrapping store.ErrNotFound.
func (c Core) Manifest(digest string) ([]byte, error) {
	var b []byte
	if err := c.X.ReadLocked(ArtifactLock(digest), Manifest, bind(digest)).Scan(&b); err != nil {
		return nil, NotFound(err, "read manifest "+digest)
	}
	return b, nil
}

// PutManifest stores doc under digest once; storing a digest again keeps
// the first document and restarts its retention age (SweepArtifacts).
func (c Core) PutManifest(digest string, doc []byte) error {
	if err := c.X.Lock(ArtifactLock(digest)); err != nil {
		return fmt.Errorf("put manifest %s: %w", digest, err)
	}
	if _, err := c.X.Exec(PutManifest, bind(digest, sqlrow.Blob(doc), time.Now().UnixNano())); err != nil {
		return fmt.Errorf("put manifest %s: %w", digest, err)
	}
	return nil
}

// Upload returns the upload session id, or an error wrapping
// store.ErrNotFound.
func (c Core) Upload(id string) (*store.Upload, error) {
	var u store.Upload
	var created int64
	err := c.X.ReadLocked(Lock{}, Upload, bind(id)).Scan(&u.ID, &u.Tenant, &u.Principal, &u.Manifest, &u.ManifestDigest, &created, &u.Lane)
	if err != nil {
		return nil, NotFound(err, "read upload "+id)
	}
	u.CreatedAt = sqlrow.FromUnixNano(created)
	return &u, nil
}

// PutUpload inserts u or replaces the upload with its ID.
func (c Core) PutUpload(u *store.Upload) error {
	_, err := c.X.Exec(PutUpload, bind(u.ID, u.Tenant, u.Principal, sqlrow.Blob(u.Manifest), u.ManifestDigest, sqlrow.UnixNano(u.CreatedAt), u.Lane))
	if err != nil {
		return fmt.Errorf("put upload %s: %w", u.ID, err)
	}
	return nil
}

// DeleteUpload deletes the upload session id; deleting an unknown id is
// not an error.
func (c Core) DeleteUpload(id string) error {
	if _, err := c.X.Exec(DeleteUpload, bind(id)); err != nil {
		return fmt.Errorf("delete upload %s: %w", id, err)
	}
	return nil
}

// --- Settings ---

// Setting returns the value of the host setting name, or an error wrapping
// store.ErrNotFound when it is unset.
func (c Core) Setting(name string) ([]byte, error) {
	var v []byte
	if err := c.X.ReadLocked(NewLock("setting", name), Setting, bind(name)).Scan(&v); err != nil {
		return nil, NotFound(err, fmt.Sprintf("read setting %q", name))
	}
	return v, nil
}

// PutSetting stores value under name unless name is already set, and
// returns the value now stored (value, or the one set before). Two
// replicas setting one name at once store one value: the insert of the
// second waits for the first's commit and keeps its value, which the read
// after it returns.
func (c Core) PutSetting(name string, value []byte) ([]byte, error) {
	if _, err := c.X.Exec(PutSetting, bind(name, sqlrow.Blob(value))); err != nil {
		return nil, fmt.Errorf("put setting %q: %w", name, err)
	}
	return c.Setting(name)
}
