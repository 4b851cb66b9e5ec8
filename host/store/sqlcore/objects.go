package sqlcore

import (
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The edge.objects metadata of store.Objects (spec/runtime-v1.md §10.5);
// LockObject stays in each store (PostgreSQL takes an advisory lock,
// SQLite's one writer needs none).

// KeyBytes binds a KV or object key as bytes, so keys compare by bytes:
// "" is an empty BLOB or BYTEA, never NULL.
func KeyBytes(key string) []byte {
	if key == "" {
		return []byte{}
	}
	return []byte(key)
}

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

// Object reads the object at (bucket, key); store.ErrNotFound when none.
func (c Core) Object(bucket, key string) (*store.Object, error) {
	o, err := scanObject(c.X.QueryRow(Object, bind(bucket, KeyBytes(key))))
	if err != nil {
		return nil, NotFound(err, fmt.Sprintf("read object %q of bucket %s", key, bucket))
	}
	return o, nil
}

// PutObject inserts or replaces o.
func (c Core) PutObject(o *store.Object) error {
	if _, err := c.X.Exec(PutObject, bind(o.Bucket, KeyBytes(o.Key), o.Tenant, o.File, o.Size, o.ETag, o.ContentType, o.UploadedAt.UnixMilli())); err != nil {
		return fmt.Errorf("put object %q of bucket %s: %w", o.Key, o.Bucket, err)
	}
	return nil
}

// DeleteObject deletes the object at (bucket, key), if any.
func (c Core) DeleteObject(bucket, key string) error {
	if _, err := c.X.Exec(DeleteObject, bind(bucket, KeyBytes(key))); err != nil {
		return fmt.Errorf("delete object %q of bucket %s: %w", key, bucket, err)
	}
	return nil
}

// ListObjects lists up to limit objects under prefix after after, by bytes.
func (c Core) ListObjects(bucket, prefix, after string, limit int) ([]*store.Object, error) {
	s, args := ListObjects, []any{bucket, KeyBytes(prefix), KeyBytes(after), limit}
	if end, ok := store.KVPrefixEnd(prefix); ok {
		s, args = ListObjectsTo, append(args, []byte(end))
	}
	out := []*store.Object{}
	err := c.X.Query(s, func(row sqlrow.Scanner) error {
		o, err := scanObject(row)
		if err == nil {
			out = append(out, o)
		}
		return err
	}, bind(args...))
	if err != nil {
		return nil, fmt.Errorf("list bucket %s: %w", bucket, err)
	}
	return out, nil
}

// ObjectUpload reads the multipart upload id of bucket; store.ErrNotFound
// when none.
func (c Core) ObjectUpload(bucket, id string) (*store.ObjectUpload, error) {
	u := &store.ObjectUpload{Bucket: bucket, ID: id}
	var key []byte
	var at int64
	if err := c.X.QueryRow(ObjectUpload, bind(bucket, id)).Scan(&u.Tenant, &key, &u.ContentType, &at); err != nil {
		return nil, NotFound(err, fmt.Sprintf("read upload %s of bucket %s", id, bucket))
	}
	u.Key, u.CreatedAt = string(key), time.UnixMilli(at).UTC()
	return u, nil
}

// PutObjectUpload inserts u; a taken id wraps store.ErrConflict (ON
// CONFLICT DO NOTHING: the transaction goes on).
func (c Core) PutObjectUpload(u *store.ObjectUpload) error {
	n, err := c.X.Exec(PutObjectUpload, bind(u.Bucket, u.ID, KeyBytes(u.Key), u.Tenant, u.ContentType, u.CreatedAt.UnixMilli()))
	switch {
	case err != nil:
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, err)
	case n == 0:
		return fmt.Errorf("create upload %s of bucket %s: %w", u.ID, u.Bucket, store.ErrConflict)
	}
	return nil
}

// DeleteObjectUpload deletes an upload and (by trigger) its parts.
func (c Core) DeleteObjectUpload(bucket, id string) error {
	if _, err := c.X.Exec(DeleteObjectUpload, bind(bucket, id)); err != nil {
		return fmt.Errorf("delete upload %s of bucket %s: %w", id, bucket, err)
	}
	return nil
}

// PutObjectPart inserts or replaces p.
func (c Core) PutObjectPart(p *store.ObjectPart) error {
	if _, err := c.X.Exec(PutObjectPart, bind(p.Bucket, p.Upload, p.Number, p.Tenant, p.File, p.Size, p.ETag)); err != nil {
		return fmt.Errorf("put part %d of upload %s: %w", p.Number, p.Upload, err)
	}
	return nil
}

// ObjectParts lists the parts of an upload by number.
func (c Core) ObjectParts(bucket, upload string) ([]*store.ObjectPart, error) {
	out := []*store.ObjectPart{}
	err := c.X.Query(ObjectParts, func(row sqlrow.Scanner) error {
		p := &store.ObjectPart{Bucket: bucket, Upload: upload}
		if err := row.Scan(&p.Tenant, &p.Number, &p.File, &p.Size, &p.ETag); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}, bind(bucket, upload))
	if err != nil {
		return nil, fmt.Errorf("list parts of upload %s: %w", upload, err)
	}
	return out, nil
}
