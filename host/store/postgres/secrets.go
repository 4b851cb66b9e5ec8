package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// The sealed sensitive values of store.Secrets (migration 00011_secrets.sql).

const (
	pgSecretCols = `worker, name, tenant, space, sealed, key_id, updated_at`
	pgSecretPut  = `INSERT INTO worker_secrets (` + pgSecretCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (worker, name) DO UPDATE SET tenant = excluded.tenant, space = excluded.space,
		sealed = excluded.sealed, key_id = excluded.key_id, updated_at = excluded.updated_at`
	pgSecretDelete = `DELETE FROM worker_secrets WHERE worker = $1 AND name = $2`
	pgSecretsOf    = `SELECT ` + pgSecretCols + ` FROM worker_secrets WHERE worker = $1 ORDER BY name`
	pgSecretsAfter = `SELECT ` + pgSecretCols + ` FROM worker_secrets WHERE (worker, name) > ($1, $2)
		ORDER BY worker, name LIMIT $3`
)

// SecretPut stores s, replacing any row at its (worker, name).
func (t *tx) SecretPut(s *store.Secret) error {
	sealed := s.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	if _, err := t.exec(pgSecretPut, s.Worker, s.Name, s.Tenant, s.Space, sealed, s.KeyID, s.UpdatedAt.UnixMilli()); err != nil {
		return fmt.Errorf("put secret %s of worker %s: %w", s.Name, s.Worker, err)
	}
	return nil
}

// SecretDelete deletes the row at (worker, name), reporting whether one was there.
func (t *tx) SecretDelete(worker, name string) (bool, error) {
	tag, err := t.exec(pgSecretDelete, worker, name)
	if err != nil {
		return false, fmt.Errorf("delete secret %s of worker %s: %w", name, worker, err)
	}
	return tag.RowsAffected() > 0, nil
}

// SecretsOf lists worker's rows by name.
func (t *tx) SecretsOf(worker string) ([]*store.Secret, error) {
	return t.secrets("list secrets of worker "+worker, pgSecretsOf, worker)
}

// SecretsAfter lists up to limit rows after (worker, name).
func (t *tx) SecretsAfter(worker, name string, limit int) ([]*store.Secret, error) {
	return t.secrets("list secrets", pgSecretsAfter, worker, name, limit)
}

func (t *tx) secrets(what, q string, args ...any) ([]*store.Secret, error) {
	out := []*store.Secret{}
	err := t.queryAll(func(rows pgx.Rows) error {
		s := &store.Secret{}
		var ms int64
		if err := rows.Scan(&s.Worker, &s.Name, &s.Tenant, &s.Space, &s.Sealed, &s.KeyID, &ms); err != nil {
			return err
		}
		s.UpdatedAt = time.UnixMilli(ms).UTC()
		out = append(out, s)
		return nil
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
