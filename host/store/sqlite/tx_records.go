package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Idempotency records (spec/host-api-v1alpha3.md §3.5) ---

// Idempotency returns the record keyed (lane, tenant, principal, space, key), or
// an error wrapping store.ErrNotFound.
func (t *tx) Idempotency(lane, tenant, principal, space, key string) (*store.Idempotency, error) {
	r, err := sqlrow.ScanIdempotencyAt(t.queryRow(qIdempotency, lane, tenant, principal, space, key), store.IdempotencyKey{Lane: lane, Tenant: tenant, Principal: principal, Space: space, Key: key})
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("read idempotency record %s/%s/%s/%s/%q", lane, tenant, principal, space, key))
	}
	return r, nil
}

// PutIdempotency inserts r or replaces the record with its key.
func (t *tx) PutIdempotency(r *store.Idempotency) error {
	_, err := t.exec(qPutIdempotency, sqlrow.IdempotencyArgs(r)...)
	if err != nil {
		return fmt.Errorf("put idempotency record %s/%s/%s/%s/%q: %w", r.Lane, r.Tenant, r.Principal, r.Space, r.Key, err)
	}
	return nil
}

// ClaimIdempotency inserts r unless a record with its key exists, which
// is an error wrapping store.ErrConflict.
func (t *tx) ClaimIdempotency(r *store.Idempotency) error {
	res, err := t.exec(qClaimIdempotency, sqlrow.IdempotencyArgs(r)...)
	n := 0
	if err == nil {
		n, err = affected(res)
	}
	if err == nil && n == 0 {
		err = store.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("claim idempotency key %s/%s/%s/%s/%q: %w", r.Lane, r.Tenant, r.Principal, r.Space, r.Key, err)
	}
	return nil
}

// RetireIdempotency deletes the records bound to uid and returns how many;
// an empty uid retires nothing (records bound to nothing keep replaying).
func (t *tx) RetireIdempotency(uid string) (int, error) {
	if uid == "" {
		return 0, nil
	}
	res, err := t.exec(qRetireIdempotency, uid)
	if err != nil {
		return 0, fmt.Errorf("retire idempotency records bound to %s: %w", uid, err)
	}
	return affected(res)
}

// ExpireIdempotency deletes the records created strictly before before and
// returns how many.
func (t *tx) ExpireIdempotency(before time.Time) (int, error) {
	res, err := t.exec(qExpireIdempotency, sqlrow.UnixNano(before))
	if err != nil {
		return 0, fmt.Errorf("expire idempotency records before %s: %w", before.Format(time.RFC3339Nano), err)
	}
	return affected(res)
}

// RebindIdempotency moves every record bound to operationID onto uid (""
// binds them to nothing): a settled 202 follows its operation's outcome
// (spec/host-api-v1alpha3.md §3.5). The records are then no longer bound to the operation.
func (t *tx) RebindIdempotency(operationID, uid string) error {
	if operationID == "" {
		return nil
	}
	if _, err := t.exec(qRebindIdempotency, uid, operationID); err != nil {
		return fmt.Errorf("rebind idempotency records of operation %s to uid %q: %w", operationID, uid, err)
	}
	return nil
}

// --- Operations (spec/host-api-v1alpha3.md §4) ---

// Operation returns the operation with id, or an error wrapping
// store.ErrNotFound.
func (t *tx) Operation(id string) (*store.Operation, error) {
	op, err := sqlrow.ScanOperation(t.queryRow(qOperation, id))
	if err != nil {
		return nil, notFound(err, "read operation "+id)
	}
	return op, nil
}

// ClaimOperation returns the operation with id like Operation: the one
// writer goroutine already keeps any other transaction from holding it.
func (t *tx) ClaimOperation(id string) (*store.Operation, error) { return t.Operation(id) }

// PutOperation inserts op or replaces the operation with its ID.
func (t *tx) PutOperation(op *store.Operation) error {
	_, err := t.exec(qPutOperation, sqlrow.OperationArgs(op)...)
	if err != nil {
		return fmt.Errorf("put operation %s: %w", op.ID, err)
	}
	return nil
}

// DueOperations returns up to limit unfinished operations whose NotBefore
// is at or before now, longest due first: by NotBefore, then CreatedAt,
// then ID. A zero NotBefore is always due.
func (t *tx) DueOperations(now time.Time, limit int) ([]*store.Operation, error) {
	ops, err := t.operations(qDueOperations, sqlrow.UnixNano(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list operations due at %s: %w", now.Format(time.RFC3339Nano), err)
	}
	return ops, nil
}

func (t *tx) operations(q query, args ...any) (_ []*store.Operation, err error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer store.JoinCleanup(&err, rows.Close)
	var ops []*store.Operation
	for rows.Next() {
		op, err := sqlrow.ScanOperation(rows)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, rows.Err()
}

// PendingOperationFor returns the oldest (by CreatedAt, then ID)
// unfinished operation whose Target is k, or an error wrapping
// store.ErrNotFound.
func (t *tx) PendingOperationFor(k store.Key) (*store.Operation, error) {
	op, err := sqlrow.ScanPendingOperation(t.queryRow(qPendingOperation, k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name), k)
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
	if err := t.queryRow(qBlobSize, digest).Scan(&n); err != nil {
		return 0, notFound(err, "read size of blob "+digest)
	}
	return n, nil
}

// Blob returns the bytes of the blob with digest, or an error wrapping
// store.ErrNotFound.
func (t *tx) Blob(digest string) ([]byte, error) {
	var b []byte
	if err := t.queryRow(qBlob, digest).Scan(&b); err != nil {
		return nil, notFound(err, "read blob "+digest)
	}
	return b, nil
}

// PutBlob stores data under digest once; storing a digest again keeps the
// first bytes (the caller has verified the digest) and restarts its
// retention age (SweepArtifacts).
func (t *tx) PutBlob(digest string, data []byte) error {
	if _, err := t.exec(qPutBlob, digest, len(data), sqlrow.Blob(data), time.Now().UnixNano()); err != nil {
		return fmt.Errorf("put blob %s (%d bytes): %w", digest, len(data), err)
	}
	return nil
}

// Holds reports whether tenant holds digest (a blob or manifest).
func (t *tx) Holds(tenant, digest string) (bool, error) {
	var one int
	err := t.queryRow(qHolds, tenant, digest).Scan(&one)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	}
	return false, fmt.Errorf("read holding of %s by tenant %s: %w", digest, tenant, err)
}

// Hold records that tenant holds digest; holding it again is a no-op.
func (t *tx) Hold(tenant, digest string) error {
	if _, err := t.exec(qHold, tenant, digest); err != nil {
		return fmt.Errorf("record holding of %s by tenant %s: %w", digest, tenant, err)
	}
	return nil
}

// Manifest returns the canonical manifest JSON with digest, or an error
// wrapping store.ErrNotFound.
func (t *tx) Manifest(digest string) ([]byte, error) {
	var b []byte
	if err := t.queryRow(qManifest, digest).Scan(&b); err != nil {
		return nil, notFound(err, "read manifest "+digest)
	}
	return b, nil
}

// PutManifest stores doc under digest once; storing a digest again keeps
// the first document and restarts its retention age (SweepArtifacts).
func (t *tx) PutManifest(digest string, doc []byte) error {
	if _, err := t.exec(qPutManifest, digest, sqlrow.Blob(doc), time.Now().UnixNano()); err != nil {
		return fmt.Errorf("put manifest %s: %w", digest, err)
	}
	return nil
}

// Upload returns the upload session id, or an error wrapping
// store.ErrNotFound.
func (t *tx) Upload(id string) (*store.Upload, error) {
	var u store.Upload
	var created int64
	err := t.queryRow(qUpload, id).Scan(&u.ID, &u.Tenant, &u.Principal, &u.Manifest, &u.ManifestDigest, &created, &u.Lane)
	if err != nil {
		return nil, notFound(err, "read upload "+id)
	}
	u.CreatedAt = sqlrow.FromUnixNano(created)
	return &u, nil
}

// PutUpload inserts u or replaces the upload with its ID.
func (t *tx) PutUpload(u *store.Upload) error {
	_, err := t.exec(qPutUpload, u.ID, u.Tenant, u.Principal, sqlrow.Blob(u.Manifest), u.ManifestDigest, sqlrow.UnixNano(u.CreatedAt), u.Lane)
	if err != nil {
		return fmt.Errorf("put upload %s: %w", u.ID, err)
	}
	return nil
}

// DeleteUpload deletes the upload session id; deleting an unknown id is
// not an error.
func (t *tx) DeleteUpload(id string) error {
	if _, err := t.exec(qDeleteUpload, id); err != nil {
		return fmt.Errorf("delete upload %s: %w", id, err)
	}
	return nil
}

// --- Settings ---

// Setting returns the value of the host setting name, or an error wrapping
// store.ErrNotFound when it is unset.
func (t *tx) Setting(name string) ([]byte, error) {
	var v []byte
	if err := t.queryRow(qSetting, name).Scan(&v); err != nil {
		return nil, notFound(err, fmt.Sprintf("read setting %q", name))
	}
	return v, nil
}

// PutSetting stores value under name unless name is already set, and
// returns the value now stored (value, or the one set before).
func (t *tx) PutSetting(name string, value []byte) ([]byte, error) {
	if _, err := t.exec(qPutSetting, name, sqlrow.Blob(value)); err != nil {
		return nil, fmt.Errorf("put setting %q: %w", name, err)
	}
	return t.Setting(name)
}

// --- Sequences ---

// Next returns the next value of sequence: 1 on first use, then 2, 3, …
// Sequences are independent of each other.
func (t *tx) Next(sequence string) (int64, error) {
	var n int64
	if err := t.queryRow(qNext, sequence).Scan(&n); err != nil {
		return 0, fmt.Errorf("advance sequence %q: %w", sequence, err)
	}
	return n, nil
}
