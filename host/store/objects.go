package store

import (
	"context"
	"time"
)

// Objects is the part of Tx holding edge.objects metadata
// (spec/runtime-v1.md §5.2): per ObjectBucket UID, each object's size,
// etag, content type and the name of the file (under the host's data
// directory, kept by host/runtime/gateway) that holds its bytes; and
// multipart uploads with their parts. Keys compare and list by bytes.
// Deleting the bucket's resource (DeleteResource) deletes its rows in the
// same transaction; deleting an upload deletes its parts. Object and part
// sizes count toward their tenant's Usage.ObjectBytes.
type Objects interface {
	Object(bucket, key string) (*Object, error) // ErrNotFound
	// LockObject holds the write lock of (bucket, key) until the
	// transaction ends: writers that take it first serialize on one key
	// across every process on the store, so a conditional put reads and
	// writes its row with no other write of the key between (repo
	// decision 0061). Two keys may share a lock (it only serializes them).
	LockObject(bucket, key string) error
	PutObject(o *Object) error             // insert or replace
	DeleteObject(bucket, key string) error // an absent key is no error
	// ListObjects returns up to limit objects of bucket whose keys start
	// with prefix and sort after after (by bytes), in byte order.
	ListObjects(bucket, prefix, after string, limit int) ([]*Object, error)

	ObjectUpload(bucket, id string) (*ObjectUpload, error) // ErrNotFound
	PutObjectUpload(u *ObjectUpload) error                 // insert; ErrConflict when the id exists
	DeleteObjectUpload(bucket, id string) error            // and its parts; absent is no error
	PutObjectPart(p *ObjectPart) error                     // insert or replace
	ObjectParts(bucket, upload string) ([]*ObjectPart, error)
}

// Object is one stored object's metadata.
type Object struct {
	Tenant, Bucket, Key string
	File                string // the body's file name in the bucket's directory
	Size                int64
	ETag                string
	ContentType         string // "" when none was given
	UploadedAt          time.Time
}

// ObjectUpload is one multipart upload in progress.
type ObjectUpload struct {
	Tenant, Bucket, ID, Key string
	ContentType             string
	CreatedAt               time.Time
}

// ObjectPart is one uploaded part of a multipart upload.
type ObjectPart struct {
	Tenant, Bucket, Upload string
	Number                 int
	File                   string
	Size                   int64
	ETag                   string
}

// ObjectChunkBytes is the size of every chunk of a body an ObjectBodies
// store holds but the last (which is 1..ObjectChunkBytes bytes): chunk
// seq holds the body's bytes [seq×ObjectChunkBytes, (seq+1)×ObjectChunkBytes).
const ObjectChunkBytes = 1 << 20

// ObjectBodies is implemented by a Store that holds edge.objects bodies
// itself, so that every replica on it serves every object
// (spec/runtime-v1.md §10.5; repo decision 0061): a body is a named run
// of chunks of a bucket (the name is what Object.File and
// ObjectPart.File hold), written one chunk per statement, outside any
// transaction, and read back one chunk per statement, so neither holds
// more than a chunk in memory nor a connection between chunks. A body is
// immutable once written; its chunks go with DeleteObjectBody, with its
// bucket's resource (DeleteResource), or with SweepObjectBodies once no
// object or part names it. The gateway keeps bodies in files under its
// data directory on a Store without it.
type ObjectBodies interface {
	// PutObjectChunk stores chunk seq (≥ 0) of body name of bucket,
	// replacing one of that number; data is 1..ObjectChunkBytes bytes.
	PutObjectChunk(ctx context.Context, bucket, name string, seq int64, data []byte) error
	// ObjectChunk reads chunk seq of body name of bucket: ErrNotFound when
	// it is not stored (the body was deleted, or is shorter).
	ObjectChunk(ctx context.Context, bucket, name string, seq int64) ([]byte, error)
	// DeleteObjectBody deletes every chunk of body name of bucket; an
	// absent body is no error.
	DeleteObjectBody(ctx context.Context, bucket, name string) error
	// SweepObjectBodies deletes the bodies that no Object and no
	// ObjectPart names and whose newest chunk was stored before before (a
	// write the host did not finish, or a removal that did not happen),
	// and returns how many.
	SweepObjectBodies(ctx context.Context, before time.Time) (int, error)
}
