package cli

import (
	"fmt"
	"log/slog"

	"github.com/takoform/takoform/host/runtime/secrets"
	"github.com/takoform/takoform/host/store/storeurl"
)

// secretsKeyPath is the secrets key file: --secrets-key, else
// FILE.secrets-key beside a SQLite data file (created on first start),
// else "" (PostgreSQL: every replica needs the same key, so none is
// made up). fixed says the operator named it.
func (f *runtimeFlags) secretsKeyPath(data string) (path string, fixed bool) {
	if f.secretsKey != "" {
		return f.secretsKey, true
	}
	if kind, p, err := storeurl.Parse(data); err == nil && kind == storeurl.SQLite {
		return p + ".secrets-key", false
	}
	return "", false
}

// secretKeys loads the host's secrets keys (spec/runtime-v1.md §3.2;
// handbook/secrets.md): the current key (a default one is created 0600
// on first start; a named one must exist, so a mistyped path never
// starts a host whose every stored value is unreadable) and, during a
// rotation, --secrets-key-previous. Without a key it returns nil and why.
func (f *runtimeFlags) secretKeys(data string, strict bool, log *slog.Logger) (*secrets.Keyring, string, error) {
	path, fixed := f.secretsKeyPath(data)
	if path == "" {
		if f.secretsKeyPrevious != "" {
			return nil, "", usage("--secrets-key-previous needs --secrets-key (the key values are sealed with from now on)")
		}
		why := "it serves PostgreSQL without --secrets-key (every replica needs the same key file)"
		log.Warn("sensitive variables are off: " + why + "; versions requiring them answer 503")
		return nil, why, nil
	}
	var cur []byte
	var err error
	if fixed {
		cur, err = secrets.LoadKey(path)
	} else {
		var created bool
		cur, created, err = secrets.LoadOrCreateKey(path)
		if created {
			log.Info("created the secrets key file; back it up apart from the data (handbook/secrets.md)", "file", path)
		}
	}
	if err != nil {
		return nil, "", usage("--secrets-key: %v", err)
	}
	if err := checkPrivate(path, "secrets key file", strict, log); err != nil {
		return nil, "", err
	}
	var prev []byte
	if f.secretsKeyPrevious != "" {
		if prev, err = secrets.LoadKey(f.secretsKeyPrevious); err != nil {
			return nil, "", usage("--secrets-key-previous: %v", err)
		}
		if err := checkPrivate(f.secretsKeyPrevious, "previous secrets key file", strict, log); err != nil {
			return nil, "", err
		}
	}
	k, err := secrets.NewKeyring(cur, prev)
	if err != nil {
		return nil, "", usage("--secrets-key: %v", err)
	}
	if prev != nil {
		log.Info(fmt.Sprintf("secrets key rotation: values open with key %s or %s and are sealed with %s; run takoform host secrets rekey", k.Current(), secrets.KeyID(prev), k.Current()))
	}
	log.Info("sensitive variables sealed with the secrets key", "file", path, "keyId", k.Current())
	return k, "", nil
}
