package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/takoform/takoform/host/store/sqlrow"
)

// query names one prepared statement. Each is prepared once per connection
// (database/sql reuses it inside transactions) and each lookup is served by
// a primary key or index of migrations/ (TestQueryPlans checks it).
type query int

const (
	qResourceByKey query = iota
	qResourceByUID
	qResourceByNativeID
	qResourcesOfKind
	qInsertResource
	qUpdateResource
	qDeleteResource
	qResourceSpace
	qClaimHolder
	qPutClaim
	qReleaseClaims
	qPins
	qDeletePins
	qInsertPin
	qPinsTo
	qPinsToName
	qIdempotency
	qPutIdempotency
	qClaimIdempotency
	qRetireIdempotency
	qExpireIdempotency
	qRebindIdempotency
	qOperation
	qPutOperation
	qDueOperations
	qPendingOperation
	qKeyState
	qBlobSize
	qBlob
	qPutBlob
	qHolds
	qHold
	qManifest
	qPutManifest
	qUpload
	qPutUpload
	qDeleteUpload
	qSetting
	qPutSetting
	qNext
	qSavepoint
	qRollbackToSavepoint
	qReleaseSavepoint
	qBegin
	qRollback
	qExactAnswer
	qKVGet
	qKVPut
	qKVDelete
	qKVList
	qKVListTo
	qKVSweep
	qQueueSend
	qQueueMessages
	qSecretPut
	qSecretDelete
	qSecretsOf
	qSecretsAfter
	qObject
	qPutObject
	qDeleteObject
	qListObjects
	qListObjectsTo
	qObjectUpload
	qPutObjectUpload
	qDeleteObjectUpload
	qPutObjectPart
	qObjectParts
	qLedgerEntries
	qLedgerLength
	qLedgerAppend
	qLedgerHead
	qRecordFiring
	qFiring
	qMoveFiring
	qOpenFirings
	qSweepFirings
	qQueueClaimable
	qQueueClaim
	qQueueAck
	qQueueRelease
	qQueueReleaseClaims
	qLease
	qLeaseForFence
	qLeasePut
	qLeaseRenew
	qLeaseRelease
	qQueueExpire
	qQueueStats
	qQueueDeliverable
	numQueries
)

var queries = [numQueries]string{
	qResourceByKey: `SELECT ` + sqlrow.ResourceValueCols + ` FROM resources
		WHERE tenant = ? AND space = ? AND api_version = ? AND kind = ? AND name = ?`,
	qResourceByUID: `SELECT ` + sqlrow.ResourceCols + ` FROM resources WHERE uid = ?`,
	qResourceByNativeID: `SELECT ` + sqlrow.ResourceCols + ` FROM resources
		WHERE tenant = ? AND native_id = ? AND native_id <> ''`,
	qResourcesOfKind: `SELECT ` + sqlrow.ResourceCols + ` FROM resources
		WHERE api_version = ? AND kind = ? ORDER BY uid`,
	qInsertResource: `INSERT INTO resources (` + sqlrow.ResourceWriteCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	qUpdateResource: `UPDATE resources SET form_api_version = ?, form_kind = ?,
		form_definition_version = ?, form_schema_digest = ?, package_digest = ?,
		generation = ?, revision = ?, spec = ?, spec_digest = ?, status = ?,
		native_id = ?, updated_at = ?,
		answer = CASE WHEN tenant = ? AND space = ? AND api_version = ? AND kind = ? AND name = ? THEN ? END
		WHERE uid = ?`,
	qDeleteResource: `DELETE FROM resources WHERE uid = ?`,
	qResourceSpace:  `SELECT tenant, space FROM resources WHERE uid = ?`,
	qClaimHolder:    `SELECT uid FROM claims WHERE tenant = ? AND claim = ?`,
	qPutClaim:       `INSERT INTO claims (tenant, claim, uid) VALUES (?, ?, ?) ON CONFLICT (tenant, claim) DO NOTHING`,
	qReleaseClaims:  `DELETE FROM claims WHERE uid = ?`,
	qPins:           `SELECT ` + sqlrow.PinCols + ` FROM pins WHERE source_uid = ? ORDER BY ord`,
	qDeletePins:     `DELETE FROM pins WHERE source_uid = ?`,
	qInsertPin: `INSERT INTO pins (ord, tenant, space, ` + sqlrow.PinCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	qPinsTo: `SELECT ` + sqlrow.PinCols + ` FROM pins WHERE target_uid = ? ORDER BY source_uid, ord`,
	qPinsToName: `SELECT ` + sqlrow.PinCols + ` FROM pins
		WHERE tenant = ? AND space = ? AND target_api_version = ? AND target_kind = ? AND target_name = ?
		ORDER BY source_uid, ord`,
	qIdempotency: `SELECT ` + sqlrow.IdempotencyValueCols + ` FROM idempotency
		WHERE lane = ? AND tenant = ? AND principal = ? AND space = ? AND key = ?`,
	qPutIdempotency: `INSERT INTO idempotency (` + sqlrow.IdempotencyCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (lane, tenant, principal, space, key) DO UPDATE SET
		fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag,
		body = excluded.body, bound_uid = excluded.bound_uid,
		bound_operation = excluded.bound_operation, created_at = excluded.created_at`,
	qClaimIdempotency: `INSERT INTO idempotency (` + sqlrow.IdempotencyCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (lane, tenant, principal, space, key) DO NOTHING`,
	qRetireIdempotency: `DELETE FROM idempotency WHERE bound_uid = ? AND bound_uid <> ''`,
	qExpireIdempotency: `DELETE FROM idempotency WHERE created_at < ?`,
	qRebindIdempotency: `UPDATE idempotency SET bound_uid = ?, bound_operation = ''
		WHERE bound_operation = ? AND bound_operation <> ''`,
	qOperation: `SELECT ` + sqlrow.OperationCols + ` FROM operations WHERE id = ?`,
	qPutOperation: `INSERT INTO operations (` + sqlrow.OperationCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, action = excluded.action,
		done = excluded.done, request = excluded.request, document = excluded.document,
		target_uid = excluded.target_uid, target_tenant = excluded.target_tenant,
		target_space = excluded.target_space, target_api_version = excluded.target_api_version,
		target_kind = excluded.target_kind, target_name = excluded.target_name,
		not_before = excluded.not_before, created_at = excluded.created_at,
		updated_at = excluded.updated_at`,
	qDueOperations: `SELECT ` + sqlrow.OperationCols + ` FROM operations
		WHERE done = 0 AND not_before <= ?
		ORDER BY not_before, created_at, id LIMIT ?`,
	qPendingOperation: `SELECT ` + sqlrow.PendingOperationCols + ` FROM operations
		WHERE done = 0 AND target_tenant = ? AND target_space = ? AND target_api_version = ?
		AND target_kind = ? AND target_name = ?
		ORDER BY created_at, id LIMIT 1`,
	// Tx.KeyState in one statement (keystate.go): one row per part, tagged
	// by its first column and padded with NULL to the widest part.
	qKeyState: `SELECT ` + strconv.FormatInt(partReplay, 10) + `, ` + sqlrow.IdempotencyValueCols + `, NULL, NULL, NULL, NULL, NULL, NULL, NULL
		FROM idempotency WHERE tenant = ?1 AND principal = ?2 AND space = ?3 AND key = ?4 AND lane = ?10
		UNION ALL SELECT ` + strconv.FormatInt(partResource, 10) + `, ` + sqlrow.ResourceValueCols + ` FROM resources
		WHERE tenant = ?5 AND space = ?6 AND api_version = ?7 AND kind = ?8 AND name = ?9
		UNION ALL SELECT ` + strconv.FormatInt(partPending, 10) + `, ` + sqlrow.PendingOperationCols + `, NULL, NULL, NULL FROM operations
		WHERE id = (SELECT id FROM operations WHERE done = 0 AND target_tenant = ?5 AND target_space = ?6
		AND target_api_version = ?7 AND target_kind = ?8 AND target_name = ?9 ORDER BY created_at, id LIMIT 1)
		UNION ALL SELECT ` + strconv.FormatInt(partPin, 10) + `, ` + sqlrow.PinCols + `, ord, NULL FROM pins
		WHERE tenant = ?5 AND space = ?6 AND target_api_version = ?7 AND target_kind = ?8 AND target_name = ?9`,
	qBlobSize: `SELECT size FROM blobs WHERE digest = ?`,
	qBlob:     `SELECT data FROM blobs WHERE digest = ?`,
	qPutBlob: `INSERT INTO blobs (digest, size, data, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`,
	qHolds:    `SELECT 1 FROM holdings WHERE tenant = ? AND digest = ?`,
	qHold:     `INSERT INTO holdings (tenant, digest) VALUES (?, ?) ON CONFLICT (tenant, digest) DO NOTHING`,
	qManifest: `SELECT doc FROM manifests WHERE digest = ?`,
	qPutManifest: `INSERT INTO manifests (digest, doc, created_at) VALUES (?, ?, ?)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`,
	qUpload:       `SELECT id, tenant, principal, manifest, manifest_digest, created_at, lane FROM uploads WHERE id = ?`,
	qDeleteUpload: `DELETE FROM uploads WHERE id = ?`,
	qPutUpload: `INSERT INTO uploads (id, tenant, principal, manifest, manifest_digest, created_at, lane)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, manifest = excluded.manifest,
		manifest_digest = excluded.manifest_digest, created_at = excluded.created_at`,
	qSetting:    `SELECT value FROM settings WHERE name = ?`,
	qPutSetting: `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
	qNext: `INSERT INTO sequences (name, value) VALUES (?, 1)
		ON CONFLICT (name) DO UPDATE SET value = value + 1
		RETURNING value`,
	// Each Update function runs in its own savepoint of the batch.
	qSavepoint:           `SAVEPOINT fn`,
	qRollbackToSavepoint: `ROLLBACK TO fn`,
	qReleaseSavepoint:    `RELEASE fn`,
	// A View's read transaction on its reader (readers.go).
	qBegin:    `BEGIN`,
	qRollback: `ROLLBACK`,
	// Store.ExactAnswer, outside any transaction (readers.go), of a
	// FormRef whose group and kind are the key's: they are bound once.
	qExactAnswer: `SELECT ` + unnamed(sqlrow.ExactAnswerCols) + ` FROM resources
		WHERE tenant = ? AND space = ? AND api_version = ? AND kind = ? AND name = ?
		AND form_api_version = api_version AND form_kind = kind
		AND form_definition_version = ? AND form_schema_digest = ?`,
	// edge.kv entries (kv.go); keys are bound as BLOBs so they compare by bytes.
	qKVGet: `SELECT tenant, value, metadata, expires_at FROM kv_entries
		WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
	qKVPut: `INSERT INTO kv_entries (namespace, key, tenant, value, metadata, expires_at, size)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET tenant = excluded.tenant, value = excluded.value,
		metadata = excluded.metadata, expires_at = excluded.expires_at, size = excluded.size`,
	qKVDelete: `DELETE FROM kv_entries WHERE namespace = ? AND key = ?`,
	qKVList: `SELECT key FROM kv_entries WHERE namespace = ?1 AND key >= ?2 AND key > ?3
		AND (expires_at IS NULL OR expires_at > ?4) ORDER BY key LIMIT ?5`,
	qKVListTo: `SELECT key FROM kv_entries WHERE namespace = ?1 AND key >= ?2 AND key > ?3 AND key < ?6
		AND (expires_at IS NULL OR expires_at > ?4) ORDER BY key LIMIT ?5`,
	qKVSweep: `DELETE FROM kv_entries WHERE rowid IN (SELECT rowid FROM kv_entries
		WHERE expires_at <= ? ORDER BY expires_at LIMIT ?) AND expires_at <= ?`,
	// edge.queue messages (queue.go).
	qQueueSend: `INSERT INTO queue_messages (queue, id, tenant, body, accepted_at, deliverable_at, attempts, size)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	qQueueMessages: `SELECT tenant, id, body, accepted_at, deliverable_at, attempts, claim FROM queue_messages
		WHERE queue = ? ORDER BY deliverable_at, id LIMIT ?`,
	// sealed sensitive values (secrets.go).
	qSecretPut: `INSERT INTO worker_secrets (worker, name, tenant, space, sealed, key_id, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (worker, name) DO UPDATE SET tenant = excluded.tenant, space = excluded.space,
		sealed = excluded.sealed, key_id = excluded.key_id, updated_at = excluded.updated_at`,
	qSecretDelete: `DELETE FROM worker_secrets WHERE worker = ? AND name = ?`,
	qSecretsOf:    `SELECT ` + secretCols + ` FROM worker_secrets WHERE worker = ? ORDER BY name`,
	qSecretsAfter: `SELECT ` + secretCols + ` FROM worker_secrets WHERE (worker, name) > (?1, ?2)
		ORDER BY worker, name LIMIT ?3`,
	// edge.objects metadata (objects.go); keys are bound as BLOBs.
	qObject: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ? AND key = ?`,
	qPutObject: `INSERT INTO objects (` + objectCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, key) DO UPDATE SET tenant = excluded.tenant, file = excluded.file, size = excluded.size,
		etag = excluded.etag, content_type = excluded.content_type, uploaded_at = excluded.uploaded_at`,
	qDeleteObject: `DELETE FROM objects WHERE bucket = ? AND key = ?`,
	qListObjects: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ?1 AND key >= ?2 AND key > ?3
		ORDER BY key LIMIT ?4`,
	qListObjectsTo: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ?1 AND key >= ?2 AND key > ?3 AND key < ?5
		ORDER BY key LIMIT ?4`,
	qObjectUpload: `SELECT tenant, key, content_type, created_at FROM object_uploads WHERE bucket = ? AND id = ?`,
	qPutObjectUpload: `INSERT INTO object_uploads (bucket, id, key, tenant, content_type, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, id) DO NOTHING`,
	qDeleteObjectUpload: `DELETE FROM object_uploads WHERE bucket = ? AND id = ?`,
	qPutObjectPart: `INSERT INTO object_parts (bucket, upload, number, tenant, file, size, etag) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, upload, number) DO UPDATE SET tenant = excluded.tenant, file = excluded.file,
		size = excluded.size, etag = excluded.etag`,
	qObjectParts: `SELECT tenant, number, file, size, etag FROM object_parts WHERE bucket = ? AND upload = ? ORDER BY number`,
	// migration ledgers (ledger.go).
	qLedgerEntries: `SELECT path, digest FROM migration_ledger_entries WHERE database = ? ORDER BY position`,
	qLedgerLength:  `SELECT length FROM migration_ledgers WHERE database = ?`,
	qLedgerAppend:  `INSERT INTO migration_ledger_entries (database, position, path, digest) VALUES (?, ?, ?, ?)`,
	qLedgerHead: `INSERT INTO migration_ledgers (database, tenant, length) VALUES (?, ?, ?)
		ON CONFLICT (database) DO UPDATE SET length = excluded.length`,
	// cron firings and queue delivery (events.go).
	qRecordFiring: `INSERT INTO cron_firings (trigger_uid, minute, tenant, state, version, updated_at, epoch) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (trigger_uid, minute) DO NOTHING`,
	qFiring: `SELECT tenant, state, version, updated_at, epoch FROM cron_firings WHERE trigger_uid = ? AND minute = ?`,
	qMoveFiring: `UPDATE cron_firings SET state = ?4, version = ?5, updated_at = ?6, epoch = ?7
		WHERE trigger_uid = ?1 AND minute = ?2 AND state = ?3`,
	qOpenFirings: `SELECT trigger_uid, minute, tenant, state, version, updated_at, epoch FROM cron_firings
		WHERE state IN ('recorded', 'dispatching') AND minute >= ? ORDER BY minute, trigger_uid LIMIT ?`,
	qSweepFirings: `DELETE FROM cron_firings WHERE minute < ? AND state NOT IN ('recorded', 'dispatching')`,
	qQueueClaimable: `SELECT tenant, id, body, accepted_at, attempts FROM queue_messages
		WHERE queue = ? AND deliverable_at <= ? ORDER BY deliverable_at, id LIMIT ?`,
	qQueueClaim: `UPDATE queue_messages SET claim = ?3, deliverable_at = ?4, attempts = attempts + 1, claim_epoch = ?5
		WHERE queue = ?1 AND id = ?2`,
	qQueueAck: `DELETE FROM queue_messages WHERE queue = ? AND id = ? AND claim = ?`,
	qQueueRelease: `UPDATE queue_messages SET claim = '', deliverable_at = ?4, attempts = ?5
		WHERE queue = ?1 AND id = ?2 AND claim = ?3`,
	qQueueReleaseClaims: `UPDATE queue_messages SET claim = '', deliverable_at = ?2 WHERE queue = ?1 AND claim <> '' AND claim_epoch < ?3`,
	qLease:              `SELECT holder, epoch, expires_at FROM leases WHERE name = ?`,
	qLeaseForFence:      `SELECT epoch FROM leases WHERE name = ?`,
	qLeasePut: `INSERT INTO leases (name, holder, epoch, expires_at) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (name) DO UPDATE SET holder = ?2, epoch = ?3, expires_at = ?4`,
	qLeaseRenew:   `UPDATE leases SET expires_at = ?4 WHERE name = ?1 AND holder = ?2 AND epoch = ?3`,
	qLeaseRelease: `UPDATE leases SET expires_at = min(expires_at, ?4) WHERE name = ?1 AND holder = ?2 AND epoch = ?3`,
	qQueueExpire:  `DELETE FROM queue_messages WHERE queue = ? AND claim = '' AND accepted_at < ?`,
	qQueueStats: `SELECT count(*), coalesce(min(accepted_at), 0), coalesce(min(deliverable_at), 0)
		FROM queue_messages WHERE queue = ?`,
	qQueueDeliverable: `SELECT count(*) FROM queue_messages WHERE queue = ? AND deliverable_at <= ?`,
}

const objectCols = `bucket, key, tenant, file, size, etag, content_type, uploaded_at`

// unnamed writes the column list cols as a select list of unnamed
// expressions, each the column's own value: +col AS "". The driver copies
// each result column's name and declared type into a Go string on every
// query it runs; an expression has no declared type, and "" no name to
// copy (PERFORMANCE.md, log entry "The host's CPU per exact read").
func unnamed(cols string) string {
	var b strings.Builder
	for i, c := range strings.Split(cols, ",") {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("+" + strings.TrimSpace(c) + ` AS ""`)
	}
	return b.String()
}

// statements are the queries prepared on one *sql.DB or *sql.Conn.
type statements [numQueries]*sql.Stmt

// preparer is an *sql.DB or an *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

func prepare(ctx context.Context, db preparer) (*statements, error) {
	var st statements
	for q, text := range queries {
		if query(q) == qExactAnswer {
			continue // prepared on each reader's driver connection (rawStmt)
		}
		s, err := db.PrepareContext(ctx, text)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare statement %d: %w", q, err), st.close())
		}
		st[q] = s
	}
	return &st, nil
}

func (st *statements) close() error {
	var errs []error
	for _, s := range st {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
