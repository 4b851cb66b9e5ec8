package store

import "time"

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
	PutObject(o *Object) error                  // insert or replace
	DeleteObject(bucket, key string) error      // an absent key is no error
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
