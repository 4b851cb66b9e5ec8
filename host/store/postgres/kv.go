package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
)

// The edge.kv entries of store.KV (migration 00008_kv.sql). Keys go to
// PostgreSQL as BYTEA, which compares by bytes, so the primary key lists
// by UTF-8 bytes whatever the database's collation.

const (
	pgKVGet = `SELECT tenant, value, metadata, expires_at FROM kv_entries
		WHERE namespace = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)`
	pgKVPut = `INSERT INTO kv_entries (namespace, key, tenant, value, metadata, expires_at, size)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (namespace, key) DO UPDATE SET tenant = excluded.tenant, value = excluded.value,
		metadata = excluded.metadata, expires_at = excluded.expires_at, size = excluded.size`
	pgKVDelete = `DELETE FROM kv_entries WHERE namespace = $1 AND key = $2`
	pgKVList   = `SELECT key FROM kv_entries WHERE namespace = $1 AND key >= $2 AND key > $3
		AND ($6::BYTEA IS NULL OR key < $6) AND (expires_at IS NULL OR expires_at > $4) ORDER BY key LIMIT $5`
	pgKVSweep = `DELETE FROM kv_entries WHERE (namespace, key) IN (SELECT namespace, key FROM kv_entries
		WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2) AND expires_at <= $1`
)

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
	var expires *int64
	if err := t.queryRow(pgKVGet, namespace, kvKey(key), now.UnixMilli()).Scan(&e.Tenant, &e.Value, &e.Metadata, &expires); err != nil {
		return nil, notFound(err, fmt.Sprintf("read KV entry %q of namespace %s", key, namespace))
	}
	if e.Value == nil {
		e.Value = []byte{}
	}
	if expires != nil {
		e.ExpiresAt = time.UnixMilli(*expires).UTC()
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
	if _, err := t.exec(pgKVPut, e.Namespace, kvKey(e.Key), e.Tenant, value, meta, millis(e.ExpiresAt), e.Size()); err != nil {
		return fmt.Errorf("put KV entry %q of namespace %s: %w", e.Key, e.Namespace, err)
	}
	return nil
}

// KVDelete deletes the entry at (namespace, key), if any.
func (t *tx) KVDelete(namespace, key string) error {
	if _, err := t.exec(pgKVDelete, namespace, kvKey(key)); err != nil {
		return fmt.Errorf("delete KV entry %q of namespace %s: %w", key, namespace, err)
	}
	return nil
}

// KVList lists up to limit live keys under prefix after after, by bytes.
func (t *tx) KVList(namespace, prefix, after string, now time.Time, limit int) ([]string, error) {
	var end any
	if e, ok := store.KVPrefixEnd(prefix); ok {
		end = []byte(e)
	}
	keys := []string{}
	err := t.queryAll(func(rows pgx.Rows) error {
		var k []byte
		if err := rows.Scan(&k); err != nil {
			return err
		}
		keys = append(keys, string(k))
		return nil
	}, pgKVList, namespace, kvKey(prefix), kvKey(after), now.UnixMilli(), limit, end)
	if err != nil {
		return nil, fmt.Errorf("list KV namespace %s: %w", namespace, err)
	}
	return keys, nil
}

// KVSweepExpired deletes up to limit entries expired at now.
func (t *tx) KVSweepExpired(now time.Time, limit int) (int, error) {
	return t.sweep("expired KV entries", pgKVSweep, now.UnixMilli(), limit)
}
