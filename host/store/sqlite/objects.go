package sqlite

import (
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The edge.objects metadata of store.Objects (migration 00007_objects.sql).

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

// Object reads the object at (bucket, key).
// LockObject holds nothing: the store's write transactions already run
// one at a time.
func (t *tx) LockObject(bucket, key string) error { return nil }

func (t *tx) Object(bucket, key string) (*store.Object, error) {
	o, err := scanObject(t.queryRow(qObject, bucket, kvKey(key)))
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("read object %q of bucket %s", key, bucket))
	}
	return o, nil
}

// PutObject inserts or replaces o.
func (t *tx) PutObject(o *store.Object) error {
	if _, err := t.exec(qPutObject, o.Bucket, kvKey(o.Key), o.Tenant, o.File, o.Size, o.ETag, o.ContentType, o.UploadedAt.UnixMilli()); err != nil {
		return fmt.Errorf("put object %q of bucket %s: %w", o.Key, o.Bucket, err)
	}
	return nil
}

// DeleteObject deletes the object at (bucket, key), if any.
func (t *tx) DeleteObject(bucket, key string) error {
	if _, err := t.exec(qDeleteObject, bucket, kvKey(key)); err != nil {
		return fmt.Errorf("delete object %q of bucket %s: %w", key, bucket, err)
	}
	return nil
}

// ListObjects lists up to limit objects under prefix after after, by bytes.
func (t *tx) ListObjects(bucket, prefix, after string, limit int) (_ []*store.Object, rerr error) {
	q, args := qListObjects, []any{bucket, kvKey(prefix), kvKey(after), limit}
	if end, ok := store.KVPrefixEnd(prefix); ok {
		q, args = qListObjectsTo, append(args, []byte(end))
	}
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("list bucket %s: %w", bucket, err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	out := []*store.Object{}
	for rows.Next() {
		o, err := scanObject(rows)
		if err != nil {
			return nil, fmt.Errorf("list bucket %s: %w", bucket, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list bucket %s: %w", bucket, err)
	}
	return out, nil
}

// ObjectUpload reads the multipart upload id of bucket.
func (t *tx) ObjectUpload(bucket, id string) (*store.ObjectUpload, error) {
	u := &store.ObjectUpload{Bucket: bucket, ID: id}
	var key []byte
	var at int64
	if err := t.queryRow(qObjectUpload, bucket, id).Scan(&u.Tenant, &key, &u.ContentType, &at); err != nil {
		return nil, notFound(err, fmt.Sprintf("read upload %s of bucket %s", id, bucket))
	}
	u.Key, u.CreatedAt = string(key), time.UnixMilli(at).UTC()
	return u, nil
}

// PutObjectUpload inserts u; a taken id wraps store.ErrConflict.
func (t *tx) PutObjectUpload(u *store.ObjectUpload) error {
	res, err := t.exec(qPutObjectUpload, u.Bucket, u.ID, kvKey(u.Key), u.Tenant, u.ContentType, u.CreatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, err)
	}
	n, err := affected(res)
	switch {
	case err != nil:
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, err)
	case n == 0:
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, store.ErrConflict)
	}
	return nil
}

// DeleteObjectUpload deletes an upload and (by trigger) its parts.
func (t *tx) DeleteObjectUpload(bucket, id string) error {
	if _, err := t.exec(qDeleteObjectUpload, bucket, id); err != nil {
		return fmt.Errorf("delete upload %s of bucket %s: %w", id, bucket, err)
	}
	return nil
}

// PutObjectPart inserts or replaces p.
func (t *tx) PutObjectPart(p *store.ObjectPart) error {
	if _, err := t.exec(qPutObjectPart, p.Bucket, p.Upload, p.Number, p.Tenant, p.File, p.Size, p.ETag); err != nil {
		return fmt.Errorf("put part %d of upload %s: %w", p.Number, p.Upload, err)
	}
	return nil
}

// ObjectParts lists the parts of an upload by number.
func (t *tx) ObjectParts(bucket, upload string) (_ []*store.ObjectPart, rerr error) {
	rows, err := t.query(qObjectParts, bucket, upload)
	if err != nil {
		return nil, fmt.Errorf("list parts of upload %s: %w", upload, err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	out := []*store.ObjectPart{}
	for rows.Next() {
		p := &store.ObjectPart{Bucket: bucket, Upload: upload}
		if err := rows.Scan(&p.Tenant, &p.Number, &p.File, &p.Size, &p.ETag); err != nil {
			return nil, fmt.Errorf("list parts of upload %s: %w", upload, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list parts of upload %s: %w", upload, err)
	}
	return out, nil
}
