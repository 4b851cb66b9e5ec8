package storetest

import (
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The sealed sensitive values of store.Secrets (spec/runtime-v1.md §3.2).
var secretCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"SecretsPutListDelete", testSecretsPutList},
	{"SecretsAfterPages", testSecretsAfter},
	{"SecretsDeletedWithWorker", testSecretsWorkerDelete},
}

func secretPut(t *testing.T, s store.Store, ss ...*store.Secret) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, x := range ss {
			if err := tx.SecretPut(x); err != nil {
				return err
			}
		}
		return nil
	})
}

func secretsOf(t *testing.T, s store.Store, worker string) []*store.Secret {
	t.Helper()
	var out []*store.Secret
	view(t, s, func(tx store.Tx) error {
		var err error
		out, err = tx.SecretsOf(worker)
		wantNoErr(t, "SecretsOf", err)
		return nil
	})
	return out
}

func secret(worker, name string, sealed []byte, d time.Duration) *store.Secret {
	return &store.Secret{Tenant: "acme", Space: "prod", Worker: worker, Name: name, Sealed: sealed, KeyID: "k1", UpdatedAt: at(d).Truncate(time.Millisecond)}
}

// A put reads back exactly (every byte of the sealed value, the key id,
// the time to the millisecond), by name; a put replaces; other workers'
// rows are apart; delete reports whether a row was there.
func testSecretsPutList(t *testing.T, s store.Store) {
	b := secret("uid-w1", "B_TOKEN", kvBytes, time.Second)
	a := secret("uid-w1", "A_KEY", []byte{0xff, 0x00}, 2*time.Second)
	other := secret("uid-w2", "A_KEY", []byte("x"), time.Second)
	secretPut(t, s, b, a, other)
	equal(t, "secrets of uid-w1 by name", secretsOf(t, s, "uid-w1"), []*store.Secret{a, b})
	equal(t, "secrets of a worker with none", secretsOf(t, s, "uid-none"), []*store.Secret{})

	repl := secret("uid-w1", "A_KEY", []byte("second"), time.Hour)
	repl.KeyID = "k2"
	secretPut(t, s, repl)
	equal(t, "secrets after a replacing put", secretsOf(t, s, "uid-w1"), []*store.Secret{repl, b})

	update(t, s, func(tx store.Tx) error {
		had, err := tx.SecretDelete("uid-w1", "A_KEY")
		wantNoErr(t, "SecretDelete", err)
		equal(t, "SecretDelete of a stored name", had, true)
		had, err = tx.SecretDelete("uid-w1", "A_KEY")
		wantNoErr(t, "SecretDelete again", err)
		equal(t, "SecretDelete of an absent name", had, false)
		return nil
	})
	equal(t, "secrets after the delete", secretsOf(t, s, "uid-w1"), []*store.Secret{b})
	equal(t, "the other worker's secrets", secretsOf(t, s, "uid-w2"), []*store.Secret{other})
}

// SecretsAfter walks every worker's rows by (worker, name) in pages.
func testSecretsAfter(t *testing.T, s store.Store) {
	all := []*store.Secret{
		secret("uid-a", "X", []byte("1"), 0), secret("uid-a", "Y", []byte("2"), 0),
		secret("uid-b", "A", []byte("3"), 0), secret("uid-c", "A", []byte("4"), 0), secret("uid-c", "B", []byte("5"), 0),
	}
	secretPut(t, s, all[4], all[2], all[0], all[3], all[1])
	var got []*store.Secret
	w, n := "", ""
	for range 10 {
		var page []*store.Secret
		view(t, s, func(tx store.Tx) error {
			var err error
			page, err = tx.SecretsAfter(w, n, 2)
			wantNoErr(t, "SecretsAfter", err)
			return nil
		})
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		w, n = page[len(page)-1].Worker, page[len(page)-1].Name
	}
	equal(t, "every secret by (worker, name)", got, all)
}

// Deleting the worker's resource deletes its secrets in that
// transaction, and leaves other workers' alone.
func testSecretsWorkerDelete(t *testing.T, s store.Store) {
	w := kv("acme", "prod", "api", "uid-w1")
	keep := kv("acme", "prod", "keep", "uid-w2")
	create(t, s, w, keep)
	secretPut(t, s, secret(w.UID, "A", []byte("1"), 0), secret(w.UID, "B", []byte("2"), 0), secret(keep.UID, "A", []byte("3"), 0))
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource(w.UID) })
	equal(t, "secrets of the deleted worker", secretsOf(t, s, w.UID), []*store.Secret{})
	equal(t, "secrets of the other worker", len(secretsOf(t, s, keep.UID)), 1)
}
