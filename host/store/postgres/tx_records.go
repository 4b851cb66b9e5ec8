package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Idempotency records (spec/host-api-v1alpha3.md §3.5) ---

// Idempotency returns the record keyed (lane, tenant, principal, space, key), or
// an error wrapping store.ErrNotFound.
func (t *tx) Idempotency(lane, tenant, principal, space, key string) (*store.Idempotency, error) {
	lock := idempotencyLock(lane, tenant, principal, space, key)
	r, err := sqlrow.ScanIdempotencyAt(t.readLocked(lock, qIdempotency, lane, tenant, principal, space, key), store.IdempotencyKey{Lane: lane, Tenant: tenant, Principal: principal, Space: space, Key: key})
	t.noteAbsent(lock, err)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("read idempotency record %s/%s/%s/%s/%q", lane, tenant, principal, space, key))
	}
	return r, nil
}

// PutIdempotency inserts r or replaces the record with its key, under the
// key's lock.
func (t *tx) PutIdempotency(r *store.Idempotency) error {
	lock := idempotencyLock(r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
	t.forget(lock)
	_, err := t.execLocked(lock, qInsertIdempotency+`
		ON CONFLICT (lane, tenant, principal, space, key) DO UPDATE SET
		fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag,
		body = excluded.body, bound_uid = excluded.bound_uid,
		bound_operation = excluded.bound_operation, created_at = excluded.created_at`, sqlrow.IdempotencyArgs(r)...)
	if err != nil {
		return fmt.Errorf("put idempotency record %s/%s/%s/%s/%q: %w", r.Lane, r.Tenant, r.Principal, r.Space, r.Key, err)
	}
	return nil
}

// ClaimIdempotency inserts r unless a record with its key exists, which
// is an error wrapping store.ErrConflict, also when a concurrent
// transaction inserts it first (this insert waits for its commit).
func (t *tx) ClaimIdempotency(r *store.Idempotency) error {
	what := fmt.Sprintf("claim idempotency key %s/%s/%s/%s/%q", r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
	lock := idempotencyLock(r.Lane, r.Tenant, r.Principal, r.Space, r.Key)
	if t.held(lock) { // nobody else can claim it before this transaction ends
		t.forget(lock)
		t.pending = append(t.pending, pendingWrite{what: what, sql: qInsertIdempotency, args: sqlrow.IdempotencyArgs(r)})
		return nil
	}
	tag, err := t.execLocked(lock, qInsertIdempotency+`
		ON CONFLICT (lane, tenant, principal, space, key) DO NOTHING`, sqlrow.IdempotencyArgs(r)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrConflict)
	}
	return nil
}

// RetireIdempotency deletes the records bound to uid and returns how many;
// an empty uid retires nothing (records bound to nothing keep replaying).
func (t *tx) RetireIdempotency(uid string) (int, error) {
	if uid == "" {
		return 0, nil
	}
	tag, err := t.exec(`DELETE FROM idempotency WHERE bound_uid = $1 AND bound_uid <> ''`, uid)
	if err != nil {
		return 0, fmt.Errorf("retire idempotency records bound to %s: %w", uid, err)
	}
	return int(tag.RowsAffected()), nil
}

// ExpireIdempotency deletes the records created strictly before before and
// returns how many.
func (t *tx) ExpireIdempotency(before time.Time) (int, error) {
	tag, err := t.exec(`DELETE FROM idempotency WHERE created_at < $1`, sqlrow.UnixNano(before))
	if err != nil {
		return 0, fmt.Errorf("expire idempotency records before %s: %w", before.Format(time.RFC3339Nano), err)
	}
	return int(tag.RowsAffected()), nil
}

// RebindIdempotency moves every record bound to operationID onto uid (""
// binds them to nothing): a settled 202 follows its operation's outcome
// (spec/host-api-v1alpha3.md §3.5).
func (t *tx) RebindIdempotency(operationID, uid string) error {
	if operationID == "" {
		return nil
	}
	if _, err := t.exec(`UPDATE idempotency SET bound_uid = $1, bound_operation = ''
		WHERE bound_operation = $2 AND bound_operation <> ''`, uid, operationID); err != nil {
		return fmt.Errorf("rebind idempotency records of operation %s to uid %q: %w", operationID, uid, err)
	}
	return nil
}

// --- Operations (spec/host-api-v1alpha3.md §4) ---

// Operation returns the operation with id, or an error wrapping
// store.ErrNotFound.
func (t *tx) Operation(id string) (*store.Operation, error) {
	op, err := sqlrow.ScanOperation(t.readLocked("", `SELECT `+sqlrow.OperationCols+` FROM operations WHERE id = $1`, id))
	if err != nil {
		return nil, notFound(err, "read operation "+id)
	}
	return op, nil
}

// ClaimOperation returns the operation with id locked FOR UPDATE for this
// transaction, without waiting: an error wrapping store.ErrLocked when
// another transaction (another replica's worker) holds it, one wrapping
// store.ErrNotFound when there is none. A replica that dies mid-commit
// loses its connection and so its lock; another then claims it.
func (t *tx) ClaimOperation(id string) (*store.Operation, error) {
	what := "claim operation " + id
	op, err := sqlrow.ScanOperation(t.queryRow(`SELECT `+sqlrow.OperationCols+` FROM operations WHERE id = $1
		FOR UPDATE SKIP LOCKED`, id))
	if err == nil {
		return op, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var exists bool
	if err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM operations WHERE id = $1)`, id).Scan(&exists); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !exists {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil, fmt.Errorf("%s: %w", what, store.ErrLocked)
}

// PutOperation inserts op or replaces the operation with its ID.
func (t *tx) PutOperation(op *store.Operation) error {
	_, err := t.exec(`INSERT INTO operations (`+sqlrow.OperationCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, action = excluded.action,
		done = excluded.done, request = excluded.request, document = excluded.document,
		target_uid = excluded.target_uid, target_tenant = excluded.target_tenant,
		target_space = excluded.target_space, target_api_version = excluded.target_api_version,
		target_kind = excluded.target_kind, target_name = excluded.target_name,
		not_before = excluded.not_before, created_at = excluded.created_at,
		updated_at = excluded.updated_at`, sqlrow.OperationArgs(op)...)
	if err != nil {
		return fmt.Errorf("put operation %s: %w", op.ID, err)
	}
	return nil
}

func (t *tx) operations(sql string, args ...any) ([]*store.Operation, error) {
	var ops []*store.Operation
	err := t.queryAll(func(rows pgx.Rows) error {
		op, err := sqlrow.ScanOperation(rows)
		if err == nil {
			ops = append(ops, op)
		}
		return err
	}, sql, args...)
	return ops, err
}

// DueOperations returns up to limit unfinished operations whose NotBefore
// is at or before now, longest due first: by NotBefore, then CreatedAt,
// then ID. A zero NotBefore is always due.
func (t *tx) DueOperations(now time.Time, limit int) ([]*store.Operation, error) {
	ops, err := t.operations(`SELECT `+sqlrow.OperationCols+` FROM operations
		WHERE done = 0 AND not_before <= $1
		ORDER BY not_before, created_at, id LIMIT $2`, sqlrow.UnixNano(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list operations due at %s: %w", now.Format(time.RFC3339Nano), err)
	}
	return ops, nil
}

// PendingOperationFor returns the oldest (by CreatedAt, then ID)
// unfinished operation whose Target is k, or an error wrapping
// store.ErrNotFound.
func (t *tx) PendingOperationFor(k store.Key) (*store.Operation, error) {
	op, err := sqlrow.ScanPendingOperation(t.queryRow(qPendingOperation, keyArgs(k)...), k)
	if err != nil {
		return nil, notFound(err, "read pending operation for "+sqlrow.KeyString(k))
	}
	return op, nil
}

// --- Artifacts (spec/host-api-v1alpha3.md §3.6) ---

// BlobSize returns the size in bytes of the blob with digest, or an error
// wrapping store.ErrNotFound.
func (t *tx) BlobSize(digest string) (int64, error) {
	var n int64
	if err := t.readLocked(artifactLock(digest), `SELECT size FROM blobs WHERE digest = $1`, digest).Scan(&n); err != nil {
		return 0, notFound(err, "read size of blob "+digest)
	}
	return n, nil
}

// Blob returns the bytes of the blob with digest, or an error wrapping
// store.ErrNotFound.
func (t *tx) Blob(digest string) ([]byte, error) {
	var b []byte
	if err := t.readLocked(artifactLock(digest), `SELECT data FROM blobs WHERE digest = $1`, digest).Scan(&b); err != nil {
		return nil, notFound(err, "read blob "+digest)
	}
	return b, nil
}

// PutBlob stores data under digest once; storing a digest again keeps the
// first bytes (the caller has verified the digest) and restarts its
// retention age (SweepArtifacts).
func (t *tx) PutBlob(digest string, data []byte) error {
	if err := t.lockArtifact(digest); err != nil {
		return fmt.Errorf("put blob %s: %w", digest, err)
	}
	if _, err := t.exec(`INSERT INTO blobs (digest, size, data, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`, digest, len(data), sqlrow.Blob(data), time.Now().UnixNano()); err != nil {
		return fmt.Errorf("put blob %s (%d bytes): %w", digest, len(data), err)
	}
	return nil
}

// Holds reports whether tenant holds digest (a blob or manifest).
func (t *tx) Holds(tenant, digest string) (bool, error) {
	var one int
	err := t.readLocked(artifactLock(digest), `SELECT 1 FROM holdings WHERE tenant = $1 AND digest = $2`, tenant, digest).Scan(&one)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	}
	return false, fmt.Errorf("read holding of %s by tenant %s: %w", digest, tenant, err)
}

// Hold records that tenant holds digest; holding it again is a no-op.
func (t *tx) Hold(tenant, digest string) error {
	if err := t.lockArtifact(digest); err != nil {
		return fmt.Errorf("record holding of %s by tenant %s: %w", digest, tenant, err)
	}
	if _, err := t.exec(`INSERT INTO holdings (tenant, digest) VALUES ($1, $2)
		ON CONFLICT (tenant, digest) DO NOTHING`, tenant, digest); err != nil {
		return fmt.Errorf("record holding of %s by tenant %s: %w", digest, tenant, err)
	}
	return nil
}

// Manifest returns the canonical manifest JSON with digest, or an error
// wrapping store.ErrNotFound.
func (t *tx) Manifest(digest string) ([]byte, error) {
	var b []byte
	if err := t.readLocked(artifactLock(digest), `SELECT doc FROM manifests WHERE digest = $1`, digest).Scan(&b); err != nil {
		return nil, notFound(err, "read manifest "+digest)
	}
	return b, nil
}

// PutManifest stores doc under digest once; storing a digest again keeps
// the first document and restarts its retention age (SweepArtifacts).
func (t *tx) PutManifest(digest string, doc []byte) error {
	if err := t.lockArtifact(digest); err != nil {
		return fmt.Errorf("put manifest %s: %w", digest, err)
	}
	if _, err := t.exec(`INSERT INTO manifests (digest, doc, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`, digest, sqlrow.Blob(doc), time.Now().UnixNano()); err != nil {
		return fmt.Errorf("put manifest %s: %w", digest, err)
	}
	return nil
}

// Upload returns the upload session id, or an error wrapping
// store.ErrNotFound.
func (t *tx) Upload(id string) (*store.Upload, error) {
	var u store.Upload
	var created int64
	err := t.readLocked("", `SELECT id, tenant, principal, manifest, manifest_digest, created_at, lane
		FROM uploads WHERE id = $1`, id).Scan(&u.ID, &u.Tenant, &u.Principal, &u.Manifest, &u.ManifestDigest, &created, &u.Lane)
	if err != nil {
		return nil, notFound(err, "read upload "+id)
	}
	u.CreatedAt = sqlrow.FromUnixNano(created)
	return &u, nil
}

// PutUpload inserts u or replaces the upload with its ID.
func (t *tx) PutUpload(u *store.Upload) error {
	_, err := t.exec(`INSERT INTO uploads (id, tenant, principal, manifest, manifest_digest, created_at, lane)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, manifest = excluded.manifest,
		manifest_digest = excluded.manifest_digest, created_at = excluded.created_at`,
		u.ID, u.Tenant, u.Principal, sqlrow.Blob(u.Manifest), u.ManifestDigest, sqlrow.UnixNano(u.CreatedAt), u.Lane)
	if err != nil {
		return fmt.Errorf("put upload %s: %w", u.ID, err)
	}
	return nil
}

// DeleteUpload deletes the upload session id; deleting an unknown id is
// not an error.
func (t *tx) DeleteUpload(id string) error {
	if _, err := t.exec(`DELETE FROM uploads WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete upload %s: %w", id, err)
	}
	return nil
}
