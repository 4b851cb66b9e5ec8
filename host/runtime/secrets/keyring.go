// Package secrets is the sealed path of sensitive variables
// (spec/runtime-v1.md §3.2): the host's secrets key file, sealing each
// value with AES-256-GCM bound to its (tenant, space, ModuleWorker UID,
// name) before the store sees it, and the service behind the host's
// secret route (Service). Values leave it only to the engine's process
// environment (host/runtime); nothing here logs or returns one.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/takoform/takoform/host/store"
)

// KeySize is the length of a secrets key file: exactly 32 bytes (an
// AES-256 key), nothing else in the file.
const KeySize = 32

// LoadKey reads the key file at path: exactly KeySize bytes. Errors name
// the file and how to make a good one, never its bytes.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	if len(b) != KeySize {
		return nil, fmt.Errorf("secrets key file %s holds %d bytes, want exactly %d random bytes (make one with: umask 077; head -c %d /dev/urandom > FILE)", path, len(b), KeySize, KeySize)
	}
	return b, nil
}

// LoadOrCreateKey is LoadKey, except that a missing file is created first
// (mode 0600, never replacing one that appears meanwhile) holding KeySize
// random bytes; created says it was.
func LoadOrCreateKey(path string) (key []byte, created bool, err error) {
	k, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	k = make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		k, err := LoadKey(path) // another process made it first
		return k, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("create secrets key file: %w", err)
	}
	if _, err := f.Write(k); err != nil {
		return nil, false, errors.Join(fmt.Errorf("write secrets key file %s: %w", path, err), f.Close(), os.Remove(path))
	}
	if err := f.Sync(); err != nil {
		return nil, false, errors.Join(fmt.Errorf("write secrets key file %s: %w", path, err), f.Close(), os.Remove(path))
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("write secrets key file %s: %w", path, err)
	}
	return k, true, nil
}

// key is one AES-256-GCM key and its id.
type key struct {
	id   string
	aead cipher.AEAD
}

func newKey(raw []byte) (*key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a secrets key is %d bytes, got %d", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &key{id: KeyID(raw), aead: aead}, nil
}

// KeyID names a key without revealing it: the first 16 hex digits of
// SHA-256("takoform secrets key id\x00" || key). Each stored value
// records the id of the key that sealed it (store.Secret.KeyID).
func KeyID(raw []byte) string {
	h := sha256.New()
	h.Write([]byte("takoform secrets key id\x00"))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Keyring seals with the current key and opens with the current or the
// previous one (a key rotation, handbook/secrets.md).
type Keyring struct {
	cur, prev *key
}

// NewKeyring makes a keyring from the current key and, during a
// rotation, the previous one (nil for none).
func NewKeyring(current, previous []byte) (*Keyring, error) {
	cur, err := newKey(current)
	if err != nil {
		return nil, err
	}
	k := &Keyring{cur: cur}
	if previous != nil {
		if k.prev, err = newKey(previous); err != nil {
			return nil, err
		}
		if k.prev.id == cur.id {
			return nil, errors.New("the previous secrets key is the current one; give the key being retired")
		}
	}
	return k, nil
}

// Current is the id of the key new values are sealed with.
func (k *Keyring) Current() string { return k.cur.id }

// ErrUndecryptable: a stored value was sealed by a key this host does
// not hold, or its bytes or address changed.
var ErrUndecryptable = errors.New("the stored value does not open with this host's secrets key")

// associated binds a sealed value to its address: a ciphertext copied to
// another worker, name, space or tenant does not open.
func associated(tenant, space, worker, name string) []byte {
	ad := []byte("takoform secret v1\x00")
	for _, s := range []string{tenant, space, worker, name} {
		ad = binary.AppendUvarint(ad, uint64(len(s)))
		ad = append(ad, s...)
	}
	return ad
}

// Seal seals value for s's address (Tenant, Space, Worker, Name) with the
// current key: it sets s.Sealed (a fresh 12-byte nonce, then the
// ciphertext and tag) and s.KeyID.
func (k *Keyring) Seal(s *store.Secret, value []byte) error {
	nonce := make([]byte, k.cur.aead.NonceSize(), k.cur.aead.NonceSize()+len(value)+k.cur.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	s.Sealed = k.cur.aead.Seal(nonce, nonce, value, associated(s.Tenant, s.Space, s.Worker, s.Name))
	s.KeyID = k.cur.id
	return nil
}

// Open returns s's value: ErrUndecryptable when neither key opens it for
// its address.
func (k *Keyring) Open(s *store.Secret) ([]byte, error) {
	for _, key := range []*key{k.cur, k.prev} {
		if key == nil || key.id != s.KeyID {
			continue
		}
		n := key.aead.NonceSize()
		if len(s.Sealed) < n {
			break
		}
		v, err := key.aead.Open(nil, s.Sealed[:n], s.Sealed[n:], associated(s.Tenant, s.Space, s.Worker, s.Name))
		if err != nil {
			break
		}
		return v, nil
	}
	return nil, fmt.Errorf("secret %s of worker %s (sealed by key %s, this host holds %s): %w", s.Name, s.Worker, s.KeyID, k.ids(), ErrUndecryptable)
}

func (k *Keyring) ids() string {
	if k.prev == nil {
		return k.cur.id
	}
	return k.cur.id + " and " + k.prev.id
}
