package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlite"
	"github.com/takoform/takoform/internal/cli"
)

// TestHostSecretsRekey: a key rotation (handbook/secrets.md). rekey with
// the new key and the previous one reseals every value the previous key
// sealed (150 of them, over more than one page), after which the new key
// alone opens each to its value; a value sealed by a third key is
// counted, left alone and makes rekey exit 1; without both keys rekey is
// a usage error.
func TestHostSecretsRekey(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "host.db")
	oldKey, newKey, strayKey := key32(t), key32(t), key32(t)
	oldFile, newFile := filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	for f, k := range map[string][]byte{oldFile: oldKey, newFile: newKey} {
		if err := os.WriteFile(f, k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	oldRing, _ := secrets.NewKeyring(oldKey, nil)
	strayRing, _ := secrets.NewKeyring(strayKey, nil)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	err = st.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			s := &store.Secret{Tenant: "acme", Space: "prod", Worker: fmt.Sprintf("uid-%03d", i), Name: "API_TOKEN", UpdatedAt: time.UnixMilli(int64(i))}
			if err := oldRing.Seal(s, []byte(fmt.Sprint("value-", i))); err != nil {
				return err
			}
			if err := tx.SecretPut(s); err != nil {
				return err
			}
		}
		s := &store.Secret{Tenant: "acme", Space: "prod", Worker: "uid-stray", Name: "API_TOKEN"}
		if err := strayRing.Seal(s, []byte("stray")); err != nil {
			return err
		}
		return tx.SecretPut(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"host", "secrets", "rekey", "--data", data, "--secrets-key", newFile}, &out, &errOut); code != 2 {
		t.Errorf("rekey without the previous key: exit %d, want 2; %s", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code := cli.Main([]string{"host", "secrets", "rekey", "--data", data, "--secrets-key", newFile, "--secrets-key-previous", oldFile}, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), fmt.Sprintf("%d resealed", n)) || !strings.Contains(out.String(), "1 open with neither key") {
		t.Fatalf("rekey: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	st, err = sqlite.Open(ctx, data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newRing, _ := secrets.NewKeyring(newKey, nil)
	err = st.View(ctx, func(tx store.Tx) error {
		for i := range n {
			rows, err := tx.SecretsOf(fmt.Sprintf("uid-%03d", i))
			if err != nil || len(rows) != 1 {
				return fmt.Errorf("worker %d: %d rows, %v", i, len(rows), err)
			}
			v, err := newRing.Open(rows[0])
			if err != nil || string(v) != fmt.Sprint("value-", i) || !rows[0].UpdatedAt.Equal(time.UnixMilli(int64(i))) {
				t.Errorf("worker %d after rekey: %q, %v, updated %s", i, v, err, rows[0].UpdatedAt)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func key32(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, secrets.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}
