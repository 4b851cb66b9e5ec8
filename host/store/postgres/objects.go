package postgres

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The edge.objects metadata of store.Objects (migration 00010_objects.sql).

const (
	pgObjectCols = `bucket, key, tenant, file, size, etag, content_type, uploaded_at`
	pgObject     = `SELECT ` + pgObjectCols + ` FROM objects WHERE bucket = $1 AND key = $2`
	pgPutObject  = `INSERT INTO objects (` + pgObjectCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (bucket, key) DO UPDATE SET tenant = excluded.tenant, file = excluded.file, size = excluded.size,
		etag = excluded.etag, content_type = excluded.content_type, uploaded_at = excluded.uploaded_at`
	pgDeleteObject = `DELETE FROM objects WHERE bucket = $1 AND key = $2`
	pgListObjects  = `SELECT ` + pgObjectCols + ` FROM objects WHERE bucket = $1 AND key >= $2 AND key > $3
		AND ($5::BYTEA IS NULL OR key < $5) ORDER BY key LIMIT $4`
	pgObjectUpload    = `SELECT tenant, key, content_type, created_at FROM object_uploads WHERE bucket = $1 AND id = $2`
	pgPutObjectUpload = `INSERT INTO object_uploads (bucket, id, key, tenant, content_type, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (bucket, id) DO NOTHING`
	pgDeleteObjectUpload = `DELETE FROM object_uploads WHERE bucket = $1 AND id = $2`
	pgPutObjectPart      = `INSERT INTO object_parts (bucket, upload, number, tenant, file, size, etag) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (bucket, upload, number) DO UPDATE SET tenant = excluded.tenant, file = excluded.file,
		size = excluded.size, etag = excluded.etag`
	pgObjectParts = `SELECT tenant, number, file, size, etag FROM object_parts WHERE bucket = $1 AND upload = $2 ORDER BY number`
)

func scanObject(r sqlrow.Scanner) (*store.Object, error) {
	o := &store.Object{}
	var key []byte
	var at int64
	if err := r.Scan(&o.Bucket, &key, &o.Tenant, &o.File, &o.Size, &o.ETag, &o.ContentType, &at); err != nil {
		return nil, err
	}
	o.Key, o.UploadedAt = string(key), time.UnixMilli(at).UTC()
	return o, nil
}

// objectLockClass is the first key of LockObject's two-key advisory locks
// ("objs"): the two-key form never meets the one-key locks of migrations.
const objectLockClass = 0x6f626a73

// LockObject takes a transaction advisory lock on a 32-bit hash of
// (bucket, key), released when the transaction ends.
func (t *tx) LockObject(bucket, key string) error {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	h.Write([]byte{0})
	h.Write([]byte(key))
	if _, err := t.exec(`SELECT pg_advisory_xact_lock($1::INT4, ($2::BIGINT - 2147483648)::INT4)`, objectLockClass, int64(h.Sum32())); err != nil {
		return fmt.Errorf("lock object %q of bucket %s: %w", key, bucket, err)
	}
	return nil
}

// Object reads the object at (bucket, key).
func (t *tx) Object(bucket, key string) (*store.Object, error) {
	o, err := scanObject(t.queryRow(pgObject, bucket, kvKey(key)))
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("read object %q of bucket %s", key, bucket))
	}
	return o, nil
}

// PutObject inserts or replaces o.
func (t *tx) PutObject(o *store.Object) error {
	if _, err := t.exec(pgPutObject, o.Bucket, kvKey(o.Key), o.Tenant, o.File, o.Size, o.ETag, o.ContentType, o.UploadedAt.UnixMilli()); err != nil {
		return fmt.Errorf("put object %q of bucket %s: %w", o.Key, o.Bucket, err)
	}
	return nil
}

// DeleteObject deletes the object at (bucket, key), if any.
func (t *tx) DeleteObject(bucket, key string) error {
	if _, err := t.exec(pgDeleteObject, bucket, kvKey(key)); err != nil {
		return fmt.Errorf("delete object %q of bucket %s: %w", key, bucket, err)
	}
	return nil
}

// ListObjects lists up to limit objects under prefix after after, by bytes.
func (t *tx) ListObjects(bucket, prefix, after string, limit int) ([]*store.Object, error) {
	var end any
	if e, ok := store.KVPrefixEnd(prefix); ok {
		end = []byte(e)
	}
	out := []*store.Object{}
	err := t.queryAll(func(rows pgx.Rows) error {
		o, err := scanObject(rows)
		if err == nil {
			out = append(out, o)
		}
		return err
	}, pgListObjects, bucket, kvKey(prefix), kvKey(after), limit, end)
	if err != nil {
		return nil, fmt.Errorf("list bucket %s: %w", bucket, err)
	}
	return out, nil
}

// ObjectUpload reads the multipart upload id of bucket.
func (t *tx) ObjectUpload(bucket, id string) (*store.ObjectUpload, error) {
	u := &store.ObjectUpload{Bucket: bucket, ID: id}
	var key []byte
	var at int64
	if err := t.queryRow(pgObjectUpload, bucket, id).Scan(&u.Tenant, &key, &u.ContentType, &at); err != nil {
		return nil, notFound(err, fmt.Sprintf("read upload %s of bucket %s", id, bucket))
	}
	u.Key, u.CreatedAt = string(key), time.UnixMilli(at).UTC()
	return u, nil
}

// PutObjectUpload inserts u; a taken id wraps store.ErrConflict.
func (t *tx) PutObjectUpload(u *store.ObjectUpload) error {
	tag, err := t.exec(pgPutObjectUpload, u.Bucket, u.ID, kvKey(u.Key), u.Tenant, u.ContentType, u.CreatedAt.UnixMilli())
	switch {
	case err != nil:
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, err)
	case tag.RowsAffected() == 0: // ON CONFLICT DO NOTHING: the transaction goes on
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, store.ErrConflict)
	}
	return nil
}

// DeleteObjectUpload deletes an upload and (by trigger) its parts.
func (t *tx) DeleteObjectUpload(bucket, id string) error {
	if _, err := t.exec(pgDeleteObjectUpload, bucket, id); err != nil {
		return fmt.Errorf("delete upload %s of bucket %s: %w", id, bucket, err)
	}
	return nil
}

// PutObjectPart inserts or replaces p.
func (t *tx) PutObjectPart(p *store.ObjectPart) error {
	if _, err := t.exec(pgPutObjectPart, p.Bucket, p.Upload, p.Number, p.Tenant, p.File, p.Size, p.ETag); err != nil {
		return fmt.Errorf("put part %d of upload %s: %w", p.Number, p.Upload, err)
	}
	return nil
}

// ObjectParts lists the parts of an upload by number.
func (t *tx) ObjectParts(bucket, upload string) ([]*store.ObjectPart, error) {
	out := []*store.ObjectPart{}
	err := t.queryAll(func(rows pgx.Rows) error {
		p := &store.ObjectPart{Bucket: bucket, Upload: upload}
		if err := rows.Scan(&p.Tenant, &p.Number, &p.File, &p.Size, &p.ETag); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}, pgObjectParts, bucket, upload)
	if err != nil {
		return nil, fmt.Errorf("list parts of upload %s: %w", upload, err)
	}
	return out, nil
}
