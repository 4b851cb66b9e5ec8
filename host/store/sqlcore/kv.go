package sqlcore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// The edge.kv entries of store.KV (spec/runtime-v1.md §5.1; SQLite's
// migration 00005_kv.sql, PostgreSQL's 00008_kv.sql). Keys are
// bound as bytes (KeyBytes): a BLOB on SQLite compares by memcmp, a BYTEA
// on PostgreSQL by bytes whatever the database's collation, so both
// stores list keys by their UTF-8 bytes. Expiry instants are Unix
// milliseconds, NULL for none.

// millis is t in Unix milliseconds, or NULL for the zero time.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// KVGet reads the live entry at (namespace, key) as of now;
// store.ErrNotFound when none, or expired.
func (c Core) KVGet(namespace, key string, now time.Time) (*store.KVEntry, error) {
	e := &store.KVEntry{Namespace: namespace, Key: key}
	var expires sql.NullInt64
	if err := c.X.QueryRow(KVGet, bind(namespace, KeyBytes(key), now.UnixMilli())).Scan(&e.Tenant, &e.Value, &e.Metadata, &expires); err != nil {
		return nil, NotFound(err, fmt.Sprintf("read KV entry %q of namespace %s", key, namespace))
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
func (c Core) KVPut(e *store.KVEntry) error {
	var meta any
	if e.Metadata != nil {
		meta = e.Metadata
	}
	value := e.Value
	if value == nil {
		value = []byte{}
	}
	if _, err := c.X.Exec(KVPut, bind(e.Namespace, KeyBytes(e.Key), e.Tenant, value, meta, millis(e.ExpiresAt), e.Size())); err != nil {
		return fmt.Errorf("put KV entry %q of namespace %s: %w", e.Key, e.Namespace, err)
	}
	return nil
}

// KVDelete deletes the entry at (namespace, key), if any.
func (c Core) KVDelete(namespace, key string) error {
	if _, err := c.X.Exec(KVDelete, bind(namespace, KeyBytes(key))); err != nil {
		return fmt.Errorf("delete KV entry %q of namespace %s: %w", key, namespace, err)
	}
	return nil
}

// KVList lists up to limit live keys under prefix after after, by bytes:
// KVListTo bounds the range by the prefix's end, KVList when it has none
// (a prefix of only U+10FFFF, or none).
func (c Core) KVList(namespace, prefix, after string, now time.Time, limit int) ([]string, error) {
	s, args := KVList, bind(namespace, KeyBytes(prefix), KeyBytes(after), now.UnixMilli(), limit)
	if end, ok := store.KVPrefixEnd(prefix); ok {
		s, args.v[args.n] = KVListTo, []byte(end)
		args.n++
	}
	keys := []string{}
	var k []byte
	dest := []any{&k} // one for every row (Rows)
	err := c.X.Query(s, func(row sqlrow.Scanner) error {
		if err := row.Scan(dest...); err != nil {
			return err
		}
		keys = append(keys, string(k))
		return nil
	}, args)
	if err != nil {
		return nil, fmt.Errorf("list KV namespace %s: %w", namespace, err)
	}
	return keys, nil
}

// KVSweepExpired deletes up to limit entries expired at now and returns
// how many it deleted.
func (c Core) KVSweepExpired(now time.Time, limit int) (int, error) {
	n, err := c.X.Exec(KVSweep, bind(now.UnixMilli(), limit))
	if err != nil {
		return 0, fmt.Errorf("sweep expired KV entries: %w", err)
	}
	return int(n), nil
}
