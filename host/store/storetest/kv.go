package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The edge.kv entries of store.KV (spec/runtime-v1.md §5.1).
var kvCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"KVPutGetExactBytes", testKVPutGet},
	{"KVExpiry", testKVExpiry},
	{"KVSweepOldestFirstUpToItsLimit", testKVSweepLimit},
	{"KVListByteOrder", testKVList},
	{"KVUsageAndNamespaceDelete", testKVUsage},
}

// kvBytes are the bytes of runtime check 11 (spec/runtime-v1.md §8.3).
var kvBytes = []byte{0x00, 0x01, 0x02, 0x7f, 0x7f, 0xfe, 0xff, 'T', 'A', 'K', 'O', 'F', 'O', 'R', 'M'}

func kvGet(t *testing.T, s store.Store, ns, k string, now time.Time) (*store.KVEntry, error) {
	t.Helper()
	var e *store.KVEntry
	var err error
	view(t, s, func(tx store.Tx) error {
		e, err = tx.KVGet(ns, k, now)
		return nil
	})
	return e, err
}

func kvPut(t *testing.T, s store.Store, es ...*store.KVEntry) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, e := range es {
			if err := tx.KVPut(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// A put reads back exactly: every byte of the value (NUL, 0x7f, 0xfe,
// 0xff included), the metadata, the expiry to the millisecond; a put
// replaces; an empty value is a value; an absent key and another
// namespace's key are ErrNotFound; delete removes, and deleting an absent
// key succeeds.
func testKVPutGet(t *testing.T, s store.Store) {
	exp := at(time.Hour).Truncate(time.Millisecond)
	e := &store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "k\x00é", Value: kvBytes, Metadata: []byte(`{"a":"b"}`), ExpiresAt: exp}
	kvPut(t, s, e, &store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "empty", Value: []byte{}})
	got, err := kvGet(t, s, "uid-ns1", "k\x00é", at(0))
	wantNoErr(t, "KVGet", err)
	equal(t, "entry read back", got, e)
	got, err = kvGet(t, s, "uid-ns1", "empty", at(0))
	wantNoErr(t, "KVGet of an empty value", err)
	equal(t, "empty value", got, &store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "empty", Value: []byte{}})
	_, err = kvGet(t, s, "uid-ns1", "k", at(0))
	wantErr(t, "KVGet of an absent key", err, store.ErrNotFound)
	_, err = kvGet(t, s, "uid-ns2", "k\x00é", at(0))
	wantErr(t, "KVGet in another namespace", err, store.ErrNotFound)

	repl := &store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "k\x00é", Value: []byte("second")}
	kvPut(t, s, repl)
	got, err = kvGet(t, s, "uid-ns1", "k\x00é", at(0))
	wantNoErr(t, "KVGet after a replacing put", err)
	equal(t, "replaced entry (no metadata, no expiry)", got, repl)

	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "KVDelete", tx.KVDelete("uid-ns1", "k\x00é"))
		wantNoErr(t, "KVDelete of an absent key", tx.KVDelete("uid-ns1", "never"))
		return nil
	})
	_, err = kvGet(t, s, "uid-ns1", "k\x00é", at(0))
	wantErr(t, "KVGet after KVDelete", err, store.ErrNotFound)
}

// An entry is live strictly before its ExpiresAt: absent to KVGet and
// KVList at and after it, until KVSweepExpired deletes it (and only it).
func testKVExpiry(t *testing.T, s store.Store) {
	exp := at(time.Minute)
	kvPut(t, s,
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "short", Value: []byte("x"), ExpiresAt: exp},
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "long", Value: []byte("y"), ExpiresAt: at(time.Hour)},
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "forever", Value: []byte("z")})
	_, err := kvGet(t, s, "uid-ns1", "short", exp.Add(-time.Millisecond))
	wantNoErr(t, "KVGet before expiry", err)
	_, err = kvGet(t, s, "uid-ns1", "short", exp)
	wantErr(t, "KVGet at expiry", err, store.ErrNotFound)
	view(t, s, func(tx store.Tx) error {
		keys, err := tx.KVList("uid-ns1", "", "", exp, 10)
		wantNoErr(t, "KVList", err)
		equal(t, "live keys at expiry", keys, []string{"forever", "long"})
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		n, err := tx.KVSweepExpired(exp.Add(-time.Millisecond), 10)
		wantNoErr(t, "KVSweepExpired before expiry", err)
		equal(t, "swept before expiry", n, 0)
		n, err = tx.KVSweepExpired(exp, 10)
		wantNoErr(t, "KVSweepExpired", err)
		equal(t, "swept at expiry", n, 1)
		return nil
	})
	equal(t, "usage after the sweep", usageOf(t, s, "acme").KVBytes, int64(len("long")+1+len("forever")+1))
}

// KVSweepExpired deletes at most limit entries, those that expired first,
// and counts what it deleted; a later sweep takes the rest.
func testKVSweepLimit(t *testing.T, s store.Store) {
	kvPut(t, s,
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "third", Value: []byte("c"), ExpiresAt: at(3 * time.Minute)},
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns2", Key: "first", Value: []byte("a"), ExpiresAt: at(time.Minute)},
		&store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: "second", Value: []byte("b"), ExpiresAt: at(2 * time.Minute)})
	stored := func(ns, key string) bool { // still stored: live before any expiry
		t.Helper()
		_, err := kvGet(t, s, ns, key, at(0))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("KVGet %s: %v", key, err)
		}
		return err == nil
	}
	update(t, s, func(tx store.Tx) error {
		n, err := tx.KVSweepExpired(at(time.Hour), 2)
		wantNoErr(t, "KVSweepExpired limit 2", err)
		equal(t, "swept with limit 2", n, 2)
		return nil
	})
	equal(t, "stored after the first sweep (first, second, third)",
		[]bool{stored("uid-ns2", "first"), stored("uid-ns1", "second"), stored("uid-ns1", "third")}, []bool{false, false, true})
	update(t, s, func(tx store.Tx) error {
		n, err := tx.KVSweepExpired(at(time.Hour), 2)
		wantNoErr(t, "KVSweepExpired again", err)
		equal(t, "swept again", n, 1)
		return nil
	})
	equal(t, "third stored after the second sweep", stored("uid-ns1", "third"), false)
}

// KVList orders by UTF-8 bytes (not by UTF-16 or a collation), honours
// prefix, after and limit, and sees one namespace only.
func testKVList(t *testing.T, s store.Store) {
	keys := []string{"a", "a\x00", "ab", "a\x7f", "aé", "a\U0001F600", "a\uFFFD", "b", "Z", "~", "é", "\U0001F600", "\uFFFD"}
	var es []*store.KVEntry
	for _, k := range keys {
		es = append(es, &store.KVEntry{Tenant: "acme", Namespace: "uid-ns1", Key: k, Value: []byte("v")})
	}
	es = append(es, &store.KVEntry{Tenant: "acme", Namespace: "uid-ns2", Key: "a", Value: []byte("v")})
	kvPut(t, s, es...)
	view(t, s, func(tx store.Tx) error {
		all, err := tx.KVList("uid-ns1", "", "", at(0), 100)
		wantNoErr(t, "KVList", err)
		equal(t, "every key by bytes", all, []string{"Z", "a", "a\x00", "ab", "a\x7f", "aé", "a\uFFFD", "a\U0001F600", "b", "~", "é", "\uFFFD", "\U0001F600"})
		under, err := tx.KVList("uid-ns1", "a", "", at(0), 100)
		wantNoErr(t, "KVList under a", err)
		equal(t, "keys under a", under, []string{"a", "a\x00", "ab", "a\x7f", "aé", "a\uFFFD", "a\U0001F600"})
		page, err := tx.KVList("uid-ns1", "a", "a\x7f", at(0), 2)
		wantNoErr(t, "KVList after a\\x7f", err)
		equal(t, "a page after a\\x7f", page, []string{"aé", "a\uFFFD"})
		last, err := tx.KVList("uid-ns1", "a\U0001F600", "", at(0), 100)
		wantNoErr(t, "KVList under an astral prefix", err)
		equal(t, "keys under a😀", last, []string{"a\U0001F600"})
		none, err := tx.KVList("uid-ns1", "q", "", at(0), 100)
		wantNoErr(t, "KVList under an unused prefix", err)
		equal(t, "keys under q", none, []string{})
		other, err := tx.KVList("uid-ns2", "", "", at(0), 100)
		wantNoErr(t, "KVList of another namespace", err)
		equal(t, "keys of uid-ns2", other, []string{"a"})
		return nil
	})
}

// Usage.KVBytes counts key, value and metadata bytes of a tenant's
// entries through put, replace and delete; deleting the namespace's
// resource deletes its entries and their usage in that transaction, and
// leaves other namespaces alone.
func testKVUsage(t *testing.T, s store.Store) {
	ns := kv("acme", "prod", "cache", "uid-ns1")
	keep := kv("acme", "prod", "keep", "uid-ns2")
	create(t, s, ns, keep)
	kvPut(t, s,
		&store.KVEntry{Tenant: "acme", Namespace: ns.UID, Key: "k1", Value: []byte("12345"), Metadata: []byte(`{}`)},
		&store.KVEntry{Tenant: "acme", Namespace: ns.UID, Key: "k2", Value: []byte("1")},
		&store.KVEntry{Tenant: "acme", Namespace: keep.UID, Key: "k", Value: []byte("123")},
		&store.KVEntry{Tenant: "globex", Namespace: "uid-other", Key: "k", Value: []byte("1")})
	equal(t, "acme KV bytes", usageOf(t, s, "acme").KVBytes, int64(2+5+2+2+1+1+3))
	kvPut(t, s, &store.KVEntry{Tenant: "acme", Namespace: ns.UID, Key: "k1", Value: []byte("1234567890")})
	equal(t, "acme KV bytes after a replace", usageOf(t, s, "acme").KVBytes, int64(2+10+2+1+1+3))
	update(t, s, func(tx store.Tx) error { return tx.KVDelete(ns.UID, "k2") })
	equal(t, "acme KV bytes after a delete", usageOf(t, s, "acme").KVBytes, int64(2+10+1+3))

	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(ns.UID) })
	_, err := kvGet(t, s, ns.UID, "k1", at(0))
	wantErr(t, "KVGet of a deleted namespace's key", err, store.ErrNotFound)
	view(t, s, func(tx store.Tx) error {
		keys, err := tx.KVList(ns.UID, "", "", at(0), 10)
		wantNoErr(t, "KVList of a deleted namespace", err)
		equal(t, "keys of a deleted namespace", keys, []string{})
		return nil
	})
	_, err = kvGet(t, s, keep.UID, "k", at(0))
	wantNoErr(t, "KVGet of another namespace", err)
	equal(t, "acme usage after the namespace's delete", usageOf(t, s, "acme"), store.Usage{Resources: 1, KVBytes: 1 + 3})
	equal(t, "globex KV bytes", usageOf(t, s, "globex").KVBytes, int64(2))
}
