package sqlite

// The edge.objects metadata of store.Objects (migration
// 00007_objects.sql) is sqlcore's but for LockObject.

// LockObject holds nothing: the store's write transactions already run
// one at a time.
func (t *tx) LockObject(bucket, key string) error { return nil }
