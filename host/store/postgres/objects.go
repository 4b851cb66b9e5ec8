package postgres

import (
	"fmt"
	"hash/fnv"
)

// The edge.objects metadata of store.Objects (migration
// 00010_objects.sql) is sqlcore's but for LockObject.

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
