package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The sealed sensitive values of store.Secrets (migration 00008_secrets.sql).

const secretCols = `worker, name, tenant, space, sealed, key_id, updated_at`

// SecretPut stores s, replacing any row at its (worker, name).
func (t *tx) SecretPut(s *store.Secret) error {
	sealed := s.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	if _, err := t.exec(qSecretPut, s.Worker, s.Name, s.Tenant, s.Space, sealed, s.KeyID, s.UpdatedAt.UnixMilli()); err != nil {
		return fmt.Errorf("put secret %s of worker %s: %w", s.Name, s.Worker, err)
	}
	return nil
}

// SecretDelete deletes the row at (worker, name), reporting whether one was there.
func (t *tx) SecretDelete(worker, name string) (bool, error) {
	res, err := t.exec(qSecretDelete, worker, name)
	if err != nil {
		return false, fmt.Errorf("delete secret %s of worker %s: %w", name, worker, err)
	}
	n, err := affected(res)
	return n > 0, err
}

// SecretsOf lists worker's rows by name.
func (t *tx) SecretsOf(worker string) ([]*store.Secret, error) {
	rows, err := t.query(qSecretsOf, worker)
	return scanSecrets(rows, err, "list secrets of worker "+worker)
}

// SecretsAfter lists up to limit rows after (worker, name).
func (t *tx) SecretsAfter(worker, name string, limit int) ([]*store.Secret, error) {
	rows, err := t.query(qSecretsAfter, worker, name, limit)
	return scanSecrets(rows, err, "list secrets")
}

func scanSecrets(rows *sql.Rows, err error, what string) (_ []*store.Secret, rerr error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { rerr = errors.Join(rerr, rows.Close()) }()
	out := []*store.Secret{}
	for rows.Next() {
		s := &store.Secret{}
		var ms int64
		if err := rows.Scan(&s.Worker, &s.Name, &s.Tenant, &s.Space, &s.Sealed, &s.KeyID, &ms); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		s.UpdatedAt = time.UnixMilli(ms).UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
