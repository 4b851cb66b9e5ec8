package secrets_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, secrets.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// A sealed value opens for its own address only (tenant, space, worker
// UID, name bound as associated data), never with another key, never
// once a byte changed; the sealed bytes do not hold the value; a
// previous key opens what it sealed while a rotation runs.
func TestSealOpen(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	ring, err := secrets.NewKeyring(k1, nil)
	if err != nil {
		t.Fatal(err)
	}
	value := []byte("the-value-" + rand.Text())
	s := &store.Secret{Tenant: "acme", Space: "prod", Worker: "uid-1", Name: "API_TOKEN"}
	if err := ring.Seal(s, value); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(s.Sealed, value) || s.KeyID != secrets.KeyID(k1) {
		t.Fatalf("sealed %x under %s: holds the value, or not sealed by the current key", s.Sealed, s.KeyID)
	}
	got, err := ring.Open(s)
	if err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Open = %q, %v; want the value", got, err)
	}
	again := *s
	if err := ring.Seal(&again, value); err != nil || bytes.Equal(again.Sealed, s.Sealed) {
		t.Errorf("sealing the same value twice gave the same bytes (a reused nonce): %v", err)
	}
	for what, moved := range map[string]store.Secret{
		"another tenant": {Tenant: "evil", Space: s.Space, Worker: s.Worker, Name: s.Name},
		"another space":  {Tenant: s.Tenant, Space: "dev", Worker: s.Worker, Name: s.Name},
		"another worker": {Tenant: s.Tenant, Space: s.Space, Worker: "uid-2", Name: s.Name},
		"another name":   {Tenant: s.Tenant, Space: s.Space, Worker: s.Worker, Name: "OTHER"},
		"a split shift":  {Tenant: s.Tenant + "p", Space: "rod", Worker: s.Worker, Name: s.Name},
	} {
		moved.Sealed, moved.KeyID = s.Sealed, s.KeyID
		if _, err := ring.Open(&moved); !errors.Is(err, secrets.ErrUndecryptable) {
			t.Errorf("a value moved to %s opened: %v", what, err)
		}
	}
	flipped := *s
	flipped.Sealed = bytes.Clone(s.Sealed)
	flipped.Sealed[len(flipped.Sealed)-1] ^= 1
	if _, err := ring.Open(&flipped); !errors.Is(err, secrets.ErrUndecryptable) {
		t.Errorf("a changed byte opened: %v", err)
	}
	other, err := secrets.NewKeyring(k2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(s); !errors.Is(err, secrets.ErrUndecryptable) {
		t.Errorf("another key opened the value: %v", err)
	}
	rotating, err := secrets.NewKeyring(k2, k1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotating.Open(s); err != nil || !bytes.Equal(got, value) {
		t.Errorf("during a rotation the previous key did not open its value: %v", err)
	}
	if _, err := secrets.NewKeyring(k1, k1); err == nil {
		t.Error("a rotation from a key to itself was accepted")
	}
}

// A missing default key file is created with 32 random bytes, mode 0600,
// and read back the same afterwards; a file of another length is refused.
func TestLoadOrCreateKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "host.db.secrets-key")
	k, created, err := secrets.LoadOrCreateKey(p)
	if err != nil || !created || len(k) != secrets.KeySize {
		t.Fatalf("LoadOrCreateKey = %d bytes, created %v, %v", len(k), created, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v, want mode 0600", fi, err)
	}
	again, created, err := secrets.LoadOrCreateKey(p)
	if err != nil || created || !bytes.Equal(again, k) {
		t.Fatalf("the second start did not read the same key: created %v, %v", created, err)
	}
	if err := os.WriteFile(p, append(k, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.LoadKey(p); err == nil {
		t.Error("a 33-byte key file was accepted")
	}
}
