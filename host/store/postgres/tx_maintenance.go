package postgres

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
)

// The maintenance statements (store.Maintenance) sqlcore does not share
// (its maintenance.go has the artifact references and the sweeps of
// operations and uploads): the SQLite store's
// (host/store/sqlite/tx_maintenance.go) in PostgreSQL's dialect.
// Artifacts follow decision spec/decisions/0011-postgres-concurrency.md: every
// read or write of a blob, manifest, holding or reference in a write
// transaction holds the digest's advisory lock (sqlcore.ArtifactLock) until it
// ends, and the artifact sweep deletes a candidate only while holding that
// lock, re-checking that nothing references it; so a sweep never deletes
// an artifact a concurrent transaction has read or is referencing.
const (
	pgSchemaVersion = `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`
	pgStats         = `SELECT (SELECT COUNT(*) FROM operations WHERE done = 0),
		(SELECT COUNT(*) FROM idempotency), (SELECT COALESCE(SUM(size), 0) FROM blobs)::BIGINT`
	// A tenant's usage is its plain row and its shard rows (tenant U+001F
	// shard, migration 00003), one range of the primary key.
	pgUsage = `SELECT COALESCE(SUM(resources), 0)::BIGINT, COALESCE(SUM(artifact_bytes), 0)::BIGINT, COALESCE(SUM(kv_bytes), 0)::BIGINT, COALESCE(SUM(queue_bytes), 0)::BIGINT, COALESCE(SUM(object_bytes), 0)::BIGINT FROM tenant_usage
		WHERE tenant = $1 OR (tenant > $1 || E'\x1f' AND tenant < $1 || E'\x20')`
	// Candidates are found unlocked; each is then deleted by its own
	// statement under its digest's lock (taken with try: a digest in use is
	// skipped this round), which re-checks age and references.
	pgSweepCandidates = `SELECT digest FROM %s a WHERE a.created_at < $1
		AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.digest = a.digest) ORDER BY a.created_at LIMIT $2`
	pgTryArtifactLock = `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`
	pgArtifactLock    = qAdvisoryLock
	pgSweepArtifact   = `DELETE FROM %s a WHERE a.digest = $1 AND a.created_at < $2
		AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.digest = a.digest)`
)

// knownSchema is the newest migration version embedded in this binary.
var knownSchema = sync.OnceValues(func() (int64, error) { return store.NewestMigration(migrations, "migrations") })

// SchemaVersion returns the applied and the embedded schema versions.
func (t *tx) SchemaVersion() (applied, known int64, err error) {
	if known, err = knownSchema(); err != nil {
		return 0, 0, err
	}
	if err := t.queryRow(pgSchemaVersion).Scan(&applied); err != nil {
		return 0, known, fmt.Errorf("read applied schema version: %w", err)
	}
	return applied, known, nil
}

// Stats counts unfinished operations and idempotency records and sums
// stored blob bytes.
func (t *tx) Stats() (st store.Stats, err error) {
	if err := t.queryRow(pgStats).Scan(&st.PendingOperations, &st.IdempotencyRecords, &st.ArtifactBytes); err != nil {
		return st, fmt.Errorf("read store gauges: %w", err)
	}
	return st, nil
}

// Usage sums the tenant's usage rows; none is the zero Usage.
func (t *tx) Usage(tenant string) (u store.Usage, err error) {
	err = t.queryRow(pgUsage, tenant).Scan(&u.Resources, &u.ArtifactBytes, &u.KVBytes, &u.QueueBytes, &u.ObjectBytes)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("read usage of tenant %s: %w", tenant, err)
	}
	return u, nil
}

// SweepArtifacts deletes up to limit unreferenced manifests and then up to
// limit unreferenced blobs stored before storedBefore; triggers drop their
// holdings, the manifests' references and the tenants' usage.
func (t *tx) SweepArtifacts(storedBefore time.Time, limit int) (int, error) {
	m, err := t.sweepArtifacts("manifests", storedBefore.UnixNano(), limit)
	if err != nil {
		return m, err
	}
	b, err := t.sweepArtifacts("blobs", storedBefore.UnixNano(), limit)
	return m + b, err
}

// sweepArtifacts deletes up to limit unreferenced rows of table (blobs or
// manifests) stored before storedBefore, one digest at a time under its
// lock.
func (t *tx) sweepArtifacts(table string, storedBefore int64, limit int) (int, error) {
	what := "unreferenced " + table
	var digests []string
	err := t.queryAll(func(r pgx.Rows) error {
		var d string
		if err := r.Scan(&d); err != nil {
			return err
		}
		digests = append(digests, d)
		return nil
	}, fmt.Sprintf(pgSweepCandidates, table), storedBefore, limit)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", what, err)
	}
	n := 0
	for _, d := range digests {
		var got bool
		if err := t.queryRow(pgTryArtifactLock, sqlcore.ArtifactLock(d).Name()).Scan(&got); err != nil {
			return n, fmt.Errorf("sweep %s: lock %s: %w", what, d, err)
		}
		if !got {
			continue // in use by a transaction now: a later sweep looks again
		}
		k, err := t.sweep(what, fmt.Sprintf(pgSweepArtifact, table), d, storedBefore)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

func (t *tx) sweep(what, q string, args ...any) (int, error) {
	tag, err := t.exec(q, args...)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", what, err)
	}
	return int(tag.RowsAffected()), nil
}
