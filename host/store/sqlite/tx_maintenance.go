package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The maintenance statements (store.Maintenance) sqlcore does not share
// (its maintenance.go has the artifact references and the sweeps of
// operations and uploads) run in the background or at scrape time, not on
// a request's path, so they are kept out of the prepared per-request set
// that TestQueryPlans holds to index lookups: a count walks a whole
// index, an artifact sweep an index range, by design.
const (
	sqlSchemaVersion = `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied = 1`
	sqlStats         = `SELECT (SELECT COUNT(*) FROM operations WHERE done = 0),
		(SELECT COUNT(*) FROM idempotency), (SELECT COALESCE(SUM(size), 0) FROM blobs)`
	sqlUsage          = `SELECT resources, artifact_bytes, kv_bytes, queue_bytes, object_bytes FROM tenant_usage WHERE tenant = ?`
	sqlSweepManifests = `DELETE FROM manifests WHERE digest IN (SELECT m.digest FROM manifests m
		WHERE m.created_at < ? AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.digest = m.digest)
		ORDER BY m.created_at LIMIT ?)`
	sqlSweepBlobs = `DELETE FROM blobs WHERE digest IN (SELECT b.digest FROM blobs b
		WHERE b.created_at < ? AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.digest = b.digest)
		ORDER BY b.created_at LIMIT ?)`
)

// knownSchema is the newest migration version embedded in this binary.
var knownSchema = sync.OnceValues(func() (int64, error) { return store.NewestMigration(migrations, "migrations") })

// SchemaVersion returns the applied and the embedded schema versions.
func (t *tx) SchemaVersion() (applied, known int64, err error) {
	if t.done {
		return 0, 0, errTxDone
	}
	if known, err = knownSchema(); err != nil {
		return 0, 0, err
	}
	if err := t.sqlc.QueryRowContext(t.user, sqlSchemaVersion).Scan(&applied); err != nil {
		return 0, known, fmt.Errorf("read applied schema version: %w", err)
	}
	return applied, known, nil
}

// Stats counts unfinished operations and idempotency records and sums
// stored blob bytes.
func (t *tx) Stats() (st store.Stats, err error) {
	if t.done {
		return st, errTxDone
	}
	err = t.sqlc.QueryRowContext(t.user, sqlStats).Scan(&st.PendingOperations, &st.IdempotencyRecords, &st.ArtifactBytes)
	if err != nil {
		return st, fmt.Errorf("read store gauges: %w", err)
	}
	return st, nil
}

// Usage reads the tenant's usage row; none is the zero Usage.
func (t *tx) Usage(tenant string) (u store.Usage, err error) {
	if t.done {
		return u, errTxDone
	}
	err = t.sqlc.QueryRowContext(t.user, sqlUsage, tenant).Scan(&u.Resources, &u.ArtifactBytes, &u.KVBytes, &u.QueueBytes, &u.ObjectBytes)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("read usage of tenant %s: %w", tenant, err)
	}
	return u, nil
}

// SweepArtifacts deletes up to limit unreferenced manifests and then up to
// limit unreferenced blobs stored before storedBefore; triggers drop their
// holdings, the manifests' references and the tenants' usage.
func (t *tx) SweepArtifacts(storedBefore time.Time, limit int) (int, error) {
	n := storedBefore.UnixNano()
	m, err := t.sweep("unreferenced manifests", sqlSweepManifests, n, limit)
	if err != nil {
		return m, err
	}
	b, err := t.sweep("unreferenced blobs", sqlSweepBlobs, n, limit)
	return m + b, err
}

func (t *tx) sweep(what, q string, args ...any) (int, error) {
	if t.done {
		return 0, errTxDone
	}
	res, err := t.sqlc.ExecContext(t.user, q, args...)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", what, err)
	}
	n, err := affected(res)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", what, err)
	}
	return n, nil
}
