package storetest

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The edge.objects metadata of store.Objects (spec/runtime-v1.md §5.2).
var objectCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"ObjectsPutReadListDelete", testObjects},
	{"ObjectUploadsAndParts", testObjectUploads},
	{"ObjectsUsageAndBucketDelete", testObjectsUsage},
	{"ObjectBodiesChunksSweepAndBucketDelete", testObjectBodies},
	{"LockObjectSerializesWritersOfOneKey", testLockObject},
}

func object(bucket, key, file string, size int64) *store.Object {
	return &store.Object{Tenant: "acme", Bucket: bucket, Key: key, File: file, Size: size, ETag: "e-" + file,
		ContentType: "text/plain", UploadedAt: at(time.Second).Truncate(time.Millisecond)}
}

func testObjects(t *testing.T, s store.Store) {
	a := object("uid-b1", "a/1", "f1", 10)
	b := object("uid-b1", "a/\uFFFD", "f2", 20)
	c := object("uid-b1", "a/\U0001F600", "f3", 30)
	d := object("uid-b1", "b", "f4", 40)
	d.ContentType = ""
	other := object("uid-b2", "a/1", "f5", 50)
	update(t, s, func(tx store.Tx) error {
		for _, o := range []*store.Object{c, a, d, b, other} {
			if err := tx.PutObject(o); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Object("uid-b1", "a/1")
		wantNoErr(t, "Object", err)
		equal(t, "object read back", got, a)
		got, err = tx.Object("uid-b1", "b")
		wantNoErr(t, "Object without a content type", err)
		equal(t, "object without a content type", got, d)
		_, err = tx.Object("uid-b1", "nope")
		wantErr(t, "Object of an absent key", err, store.ErrNotFound)
		all, err := tx.ListObjects("uid-b1", "", "", 10)
		wantNoErr(t, "ListObjects", err)
		equal(t, "every object by bytes", all, []*store.Object{a, b, c, d})
		under, err := tx.ListObjects("uid-b1", "a/", "a/1", 1)
		wantNoErr(t, "ListObjects under a/ after a/1", err)
		equal(t, "one object under a/ after a/1", under, []*store.Object{b})
		return nil
	})
	repl := object("uid-b1", "a/1", "f9", 99)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutObject(repl); err != nil {
			return err
		}
		wantNoErr(t, "DeleteObject", tx.DeleteObject("uid-b1", "b"))
		wantNoErr(t, "DeleteObject of an absent key", tx.DeleteObject("uid-b1", "nope"))
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Object("uid-b1", "a/1")
		wantNoErr(t, "Object after a replace", err)
		equal(t, "replaced object", got, repl)
		_, err = tx.Object("uid-b1", "b")
		wantErr(t, "Object after DeleteObject", err, store.ErrNotFound)
		return nil
	})
}

func testObjectUploads(t *testing.T, s store.Store) {
	u := &store.ObjectUpload{Tenant: "acme", Bucket: "uid-b1", ID: "up_1", Key: "big", ContentType: "video/mp4", CreatedAt: at(0).Truncate(time.Millisecond)}
	p1 := &store.ObjectPart{Tenant: "acme", Bucket: "uid-b1", Upload: "up_1", Number: 2, File: "p2", Size: 5, ETag: "e2"}
	p2 := &store.ObjectPart{Tenant: "acme", Bucket: "uid-b1", Upload: "up_1", Number: 1, File: "p1", Size: 7, ETag: "e1"}
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutObjectUpload(u); err != nil {
			return err
		}
		wantErr(t, "PutObjectUpload of a taken id", tx.PutObjectUpload(u), store.ErrConflict)
		if err := tx.PutObjectPart(p1); err != nil {
			return err
		}
		return tx.PutObjectPart(p2)
	})
	p1b := &store.ObjectPart{Tenant: "acme", Bucket: "uid-b1", Upload: "up_1", Number: 2, File: "p2b", Size: 6, ETag: "e2b"}
	update(t, s, func(tx store.Tx) error { return tx.PutObjectPart(p1b) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.ObjectUpload("uid-b1", "up_1")
		wantNoErr(t, "ObjectUpload", err)
		equal(t, "upload read back", got, u)
		parts, err := tx.ObjectParts("uid-b1", "up_1")
		wantNoErr(t, "ObjectParts", err)
		equal(t, "parts by number, the replaced one new", parts, []*store.ObjectPart{p2, p1b})
		return nil
	})
	equal(t, "acme object bytes with parts", usageOf(t, s, "acme").ObjectBytes, int64(13))
	update(t, s, func(tx store.Tx) error { return tx.DeleteObjectUpload("uid-b1", "up_1") })
	view(t, s, func(tx store.Tx) error {
		_, err := tx.ObjectUpload("uid-b1", "up_1")
		wantErr(t, "ObjectUpload after its delete", err, store.ErrNotFound)
		parts, err := tx.ObjectParts("uid-b1", "up_1")
		wantNoErr(t, "ObjectParts after the upload's delete", err)
		equal(t, "parts after the upload's delete", parts, []*store.ObjectPart{})
		return nil
	})
	equal(t, "acme object bytes after the upload's delete", usageOf(t, s, "acme").ObjectBytes, int64(0))
}

func testObjectsUsage(t *testing.T, s store.Store) {
	bucket := kv("acme", "prod", "media", "uid-b1")
	create(t, s, bucket)
	update(t, s, func(tx store.Tx) error {
		for _, o := range []*store.Object{object(bucket.UID, "x", "f1", 100), object(bucket.UID, "y", "f2", 20), object("uid-b2", "x", "f3", 3)} {
			if err := tx.PutObject(o); err != nil {
				return err
			}
		}
		if err := tx.PutObjectUpload(&store.ObjectUpload{Tenant: "acme", Bucket: bucket.UID, ID: "up", Key: "z", CreatedAt: at(0)}); err != nil {
			return err
		}
		return tx.PutObjectPart(&store.ObjectPart{Tenant: "acme", Bucket: bucket.UID, Upload: "up", Number: 1, File: "p", Size: 4, ETag: "e"})
	})
	equal(t, "acme object bytes", usageOf(t, s, "acme").ObjectBytes, int64(127))
	update(t, s, func(tx store.Tx) error { return tx.PutObject(object(bucket.UID, "x", "f9", 10)) })
	equal(t, "acme object bytes after a replace", usageOf(t, s, "acme").ObjectBytes, int64(37))
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(bucket.UID) })
	view(t, s, func(tx store.Tx) error {
		objs, err := tx.ListObjects(bucket.UID, "", "", 10)
		wantNoErr(t, "ListObjects of a deleted bucket", err)
		equal(t, "objects of a deleted bucket", objs, []*store.Object{})
		_, err = tx.ObjectUpload(bucket.UID, "up")
		wantErr(t, "ObjectUpload of a deleted bucket", err, store.ErrNotFound)
		return nil
	})
	equal(t, "acme usage after the bucket's delete", usageOf(t, s, "acme"), store.Usage{ObjectBytes: 3})
}

// A store that holds object bodies itself (store.ObjectBodies, repo
// decision 0061): chunks read back exactly, a replaced chunk reads its new
// bytes, an absent chunk or a deleted body is ErrNotFound; the sweep
// removes only bodies nothing names whose newest chunk is old enough;
// deleting the bucket's resource deletes its chunks.
func testObjectBodies(t *testing.T, s store.Store) {
	b, ok := s.(store.ObjectBodies)
	if !ok {
		t.Skip("this store keeps no object bodies (the gateway keeps them in files)")
	}
	ctx := context.Background()
	bucket := kv("acme", "prod", "media", "uid-b1")
	create(t, s, bucket)
	full := bytes.Repeat([]byte{0xa5}, store.ObjectChunkBytes)
	put := func(bucket, name string, seq int64, data []byte) {
		t.Helper()
		wantNoErr(t, "PutObjectChunk", b.PutObjectChunk(ctx, bucket, name, seq, data))
	}
	chunk := func(bucket, name string, seq int64) ([]byte, error) {
		t.Helper()
		return b.ObjectChunk(ctx, bucket, name, seq)
	}
	put(bucket.UID, "o-named", 0, full)
	put(bucket.UID, "o-named", 1, []byte{0x00, 0xff})
	put(bucket.UID, "p-part", 0, []byte("part"))
	put(bucket.UID, "tmp-orphan", 0, []byte("orphan"))
	put("uid-b2", "o-named", 0, []byte("other bucket"))
	got, err := chunk(bucket.UID, "o-named", 0)
	wantNoErr(t, "ObjectChunk 0", err)
	equal(t, "a full chunk read back", bytes.Equal(got, full), true)
	got, err = chunk(bucket.UID, "o-named", 1)
	wantNoErr(t, "ObjectChunk 1", err)
	equal(t, "the last chunk read back", got, []byte{0x00, 0xff})
	_, err = chunk(bucket.UID, "o-named", 2)
	wantErr(t, "ObjectChunk past the end", err, store.ErrNotFound)
	put(bucket.UID, "o-named", 1, []byte{0x01})
	got, err = chunk(bucket.UID, "o-named", 1)
	wantNoErr(t, "ObjectChunk after a replace", err)
	equal(t, "a replaced chunk", got, []byte{0x01})
	if err := b.PutObjectChunk(ctx, bucket.UID, "o-named", 2, make([]byte, store.ObjectChunkBytes+1)); err == nil {
		t.Error("PutObjectChunk took a chunk larger than ObjectChunkBytes")
	}
	if err := b.PutObjectChunk(ctx, bucket.UID, "o-named", 2, nil); err == nil {
		t.Error("PutObjectChunk took an empty chunk")
	}

	update(t, s, func(tx store.Tx) error {
		if err := tx.PutObject(object(bucket.UID, "x", "o-named", int64(len(full)+1))); err != nil {
			return err
		}
		if err := tx.PutObjectUpload(&store.ObjectUpload{Tenant: "acme", Bucket: bucket.UID, ID: "up", Key: "z", CreatedAt: at(0)}); err != nil {
			return err
		}
		return tx.PutObjectPart(&store.ObjectPart{Tenant: "acme", Bucket: bucket.UID, Upload: "up", Number: 1, File: "p-part", Size: 4, ETag: "e"})
	})
	n, err := b.SweepObjectBodies(ctx, time.Now().Add(-time.Hour))
	wantNoErr(t, "SweepObjectBodies of recent bodies", err)
	equal(t, "bodies swept while recent", n, 0)
	n, err = b.SweepObjectBodies(ctx, time.Now().Add(time.Minute))
	wantNoErr(t, "SweepObjectBodies", err)
	equal(t, "bodies swept: the orphan of uid-b1 and the body of uid-b2 nothing names", n, 2)
	_, err = chunk(bucket.UID, "tmp-orphan", 0)
	wantErr(t, "ObjectChunk of a swept body", err, store.ErrNotFound)
	for _, name := range []string{"o-named", "p-part"} {
		_, err = chunk(bucket.UID, name, 0)
		wantNoErr(t, "ObjectChunk of a named body after the sweep", err)
	}

	wantNoErr(t, "DeleteObjectBody", b.DeleteObjectBody(ctx, bucket.UID, "p-part"))
	wantNoErr(t, "DeleteObjectBody of an absent body", b.DeleteObjectBody(ctx, bucket.UID, "p-part"))
	_, err = chunk(bucket.UID, "p-part", 0)
	wantErr(t, "ObjectChunk of a deleted body", err, store.ErrNotFound)
	put("uid-b2", "o-kept", 0, []byte("kept"))
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(bucket.UID) })
	_, err = chunk(bucket.UID, "o-named", 1)
	wantErr(t, "ObjectChunk of a deleted bucket", err, store.ErrNotFound)
	got, err = chunk("uid-b2", "o-kept", 0)
	wantNoErr(t, "ObjectChunk of another bucket after a bucket's delete", err)
	equal(t, "another bucket's chunk", got, []byte("kept"))
}

// Writers that take LockObject first serialize on one key: each of
// several concurrent read-modify-write transactions (holding their read
// across a pause, where another would interleave without the lock) sees
// the previous one's write, so no increment is lost.
func testLockObject(t *testing.T, s store.Store) {
	const writers = 4
	update(t, s, func(tx store.Tx) error { return tx.PutObject(object("uid-b1", "counter", "0", 0)) })
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Update(context.Background(), func(tx store.Tx) error {
				if err := tx.LockObject("uid-b1", "counter"); err != nil {
					return err
				}
				o, err := tx.Object("uid-b1", "counter")
				if err != nil {
					return err
				}
				time.Sleep(20 * time.Millisecond)
				n, err := strconv.Atoi(o.File)
				if err != nil {
					return err
				}
				return tx.PutObject(object("uid-b1", "counter", strconv.Itoa(n+1), 0))
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		wantNoErr(t, "a locked read-modify-write", err)
	}
	view(t, s, func(tx store.Tx) error {
		o, err := tx.Object("uid-b1", "counter")
		wantNoErr(t, "Object", err)
		equal(t, "the counter after every locked increment", o.File, strconv.Itoa(writers))
		return nil
	})
}
