package store

import "time"

// KV is the part of Tx holding edge.kv entries for the runtime gateway
// (spec/runtime-v1.md §5.1): opaque values under byte-string keys, one
// keyspace per EdgeKVNamespace UID. Keys are compared and listed by their
// bytes (UTF-8 for the keys the gateway admits); the store checks no
// Interface limit, the gateway does. An entry whose ExpiresAt has passed
// is absent to KVGet and KVList and is removed by KVSweepExpired.
// Deleting the namespace's resource (DeleteResource) deletes its entries
// in the same transaction. Every entry counts Size() bytes toward its
// tenant's Usage.KVBytes.
type KV interface {
	// KVGet reads the live entry at (namespace, key) as of now;
	// ErrNotFound when there is none or it has expired.
	KVGet(namespace, key string, now time.Time) (*KVEntry, error)
	// KVPut stores e, replacing any entry at its (Namespace, Key).
	KVPut(e *KVEntry) error
	// KVDelete deletes the entry at (namespace, key); an absent key is no
	// error.
	KVDelete(namespace, key string) error
	// KVList returns up to limit keys of namespace's live entries as of
	// now that start with prefix and sort after after (both compared by
	// bytes; "" bounds nothing), in byte order.
	KVList(namespace, prefix, after string, now time.Time, limit int) ([]string, error)
	// KVSweepExpired deletes up to limit entries whose ExpiresAt is at or
	// before now, and returns how many it deleted.
	KVSweepExpired(now time.Time, limit int) (int, error)
}

// KVEntry is one stored edge.kv entry. Metadata is the canonical JSON of
// its metadata map, nil when none was stored. ExpiresAt is the zero time
// for an entry without a TTL, otherwise kept to the millisecond.
type KVEntry struct {
	Tenant    string // the namespace's tenant, whose usage the entry counts toward
	Namespace string // the EdgeKVNamespace UID
	Key       string
	Value     []byte
	Metadata  []byte
	ExpiresAt time.Time
}

// Size is what e counts toward its tenant's storage: the bytes of its key,
// value and metadata.
func (e *KVEntry) Size() int64 { return int64(len(e.Key) + len(e.Value) + len(e.Metadata)) }

// KVPrefixEnd is the least byte string greater than every string that
// starts with prefix, so a listing under prefix reads keys in
// [prefix, end); ok is false when none exists (prefix is empty or all
// 0xFF bytes) and the listing runs from prefix on.
func KVPrefixEnd(prefix string) (end string, ok bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xFF {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
