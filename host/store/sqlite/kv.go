package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
)

// The edge.kv entries of store.KV (migration 00005_kv.sql). Keys go to
// SQLite as BLOBs: a BLOB compares by memcmp, so the primary key lists by
// UTF-8 bytes.

func kvKey(key string) []byte { return sqlcore.KeyBytes(key) }

func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// KVGet reads the live entry at (namespace, key) as of now.
func (t *tx) KVGet(namespace, key string, now time.Time) (*store.KVEntry, error) {
	e := &store.KVEntry{Namespace: namespace, Key: key}
	var expires sql.NullInt64
	if err := t.queryRow(qKVGet, namespace, kvKey(key), now.UnixMilli()).Scan(&e.Tenant, &e.Value, &e.Metadata, &expires); err != nil {
		return nil, notFound(err, fmt.Sprintf("read KV entry %q of namespace %s", key, namespace))
	}
	if e.Value == nil {
		e.Value = []byte{}
	}
	if expires.Valid {
		e.ExpiresAt = time.UnixMilli(expires.Int64).UTC()
	}
	return e, nil
}

// KVPut stores e, replacing any entry at its key.
func (t *tx) KVPut(e *store.KVEntry) error {
	var meta any
	if e.Metadata != nil {
		meta = e.Metadata
	}
	value := e.Value
	if value == nil {
		value = []byte{}
	}
	if _, err := t.exec(qKVPut, e.Namespace, kvKey(e.Key), e.Tenant, value, meta, millis(e.ExpiresAt), e.Size()); err != nil {
		return fmt.Errorf("put KV entry %q of namespace %s: %w", e.Key, e.Namespace, err)
	}
	return nil
}

// KVDelete deletes the entry at (namespace, key), if any.
func (t *tx) KVDelete(namespace, key string) error {
	if _, err := t.exec(qKVDelete, namespace, kvKey(key)); err != nil {
		return fmt.Errorf("delete KV entry %q of namespace %s: %w", key, namespace, err)
	}
	return nil
}

// KVList lists up to limit live keys under prefix after after, by bytes.
func (t *tx) KVList(namespace, prefix, after string, now time.Time, limit int) (_ []string, rerr error) {
	q, args := qKVList, []any{namespace, kvKey(prefix), kvKey(after), now.UnixMilli(), limit}
	if end, ok := store.KVPrefixEnd(prefix); ok {
		q, args = qKVListTo, append(args, []byte(end))
	}
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("list KV namespace %s: %w", namespace, err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	keys := []string{}
	for rows.Next() {
		var k []byte
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("list KV namespace %s: %w", namespace, err)
		}
		keys = append(keys, string(k))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list KV namespace %s: %w", namespace, err)
	}
	return keys, nil
}

// KVSweepExpired deletes up to limit entries expired at now.
func (t *tx) KVSweepExpired(now time.Time, limit int) (int, error) {
	ms := now.UnixMilli()
	res, err := t.exec(qKVSweep, ms, limit, ms)
	if err != nil {
		return 0, fmt.Errorf("sweep expired KV entries: %w", err)
	}
	return affected(res)
}
