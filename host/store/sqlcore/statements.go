package sqlcore

import (
	"strconv"
	"strings"

	"github.com/takoform/takoform/host/store/sqlrow"
)

// Stmt names one shared statement. Its text is written once, in SQLite's
// placeholders (? in order, or ?N by number, never both in one text), and
// spelled for PostgreSQL ($N) once at init (Text); the few whose SQL
// really differs have a PostgreSQL text of their own (pgOnly). A store
// numbers its own statements after NumStmts.
type Stmt int

// The shared statements.
const (
	ResourceByKey Stmt = iota
	ResourceByUID
	ResourceByNativeID
	ResourcesOfKind
	InsertResource
	UpdateResource
	DeleteResource
	ResourceSpace
	ClaimHolder
	PutClaim
	ReleaseClaims
	Pins
	DeletePins
	InsertPin
	PinsTo
	PinsToName
	Idempotency
	InsertIdempotency
	PutIdempotency
	ClaimIdempotency
	RetireIdempotency
	ExpireIdempotency
	RebindIdempotency
	Operation
	PutOperation
	DueOperations
	PendingOperation
	BlobSize
	Blob
	PutBlob
	Holds
	Hold
	Manifest
	PutManifest
	Upload
	PutUpload
	DeleteUpload
	Setting
	PutSetting
	Lease
	LeaseInsert
	LeaseTakeover
	LeaseRenew
	LeaseRelease
	LeaseForFence
	SecretPut
	SecretDelete
	SecretsOf
	SecretsAfter
	Object
	PutObject
	DeleteObject
	ListObjects
	ListObjectsTo
	ObjectUpload
	PutObjectUpload
	DeleteObjectUpload
	PutObjectPart
	ObjectParts
	RecordFiring
	Firing
	MoveFiring
	OpenFirings
	SweepFirings
	QueueRelease
	QueueReleaseClaims
	QueueExpire
	QueueMessages
	KVGet
	KVPut
	KVDelete
	KVList
	KVListTo
	KVSweep
	LedgerEntries
	DropArtifactRefs
	InsertArtifactRef
	SweepOperations
	SweepUploads
	NumStmts
)

// Dialect is a store's SQL dialect.
type Dialect int

// The dialects.
const (
	SQLite Dialect = iota
	Postgres
)

const (
	insertResource = `INSERT INTO resources (` + sqlrow.ResourceWriteCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertIdempotency = `INSERT INTO idempotency (` + sqlrow.IdempotencyCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateResource = `UPDATE resources SET form_api_version = ?1, form_kind = ?2,
		form_definition_version = ?3, form_schema_digest = ?4, package_digest = ?5,
		generation = ?6, revision = ?7, spec = ?8, spec_digest = ?9, status = ?10,
		native_id = ?11, updated_at = ?12,
		answer = CASE WHEN tenant = ?13 AND space = ?14 AND api_version = ?15 AND kind = ?16 AND name = ?17 THEN ?18` + answerCast + ` END
		WHERE uid = ?19`
	answerCast = `/*answer*/`
	leaseCols  = `holder, epoch, expires_at`
	secretCols = `worker, name, tenant, space, sealed, key_id, updated_at`
	objectCols = `bucket, key, tenant, file, size, etag, content_type, uploaded_at`
)

var shared = [NumStmts]string{
	// By-key lookups select only the columns their key does not give
	// (decision spec/decisions/0022-exact-read-path.md, 3).
	ResourceByKey: `SELECT ` + sqlrow.ResourceValueCols + ` FROM resources
		WHERE tenant = ? AND space = ? AND api_version = ? AND kind = ? AND name = ?`,
	ResourceByUID: `SELECT ` + sqlrow.ResourceCols + ` FROM resources WHERE uid = ?`,
	ResourceByNativeID: `SELECT ` + sqlrow.ResourceCols + ` FROM resources
		WHERE tenant = ? AND native_id = ? AND native_id <> ''`,
	ResourcesOfKind: `SELECT ` + sqlrow.ResourceCols + ` FROM resources
		WHERE api_version = ? AND kind = ? ORDER BY uid`,
	InsertResource: insertResource,
	UpdateResource: strings.Replace(updateResource, answerCast, "", 1),
	DeleteResource: `DELETE FROM resources WHERE uid = ?`,
	ResourceSpace:  `SELECT tenant, space FROM resources WHERE uid = ?`,
	ClaimHolder:    `SELECT uid FROM claims WHERE tenant = ? AND claim = ?`,
	PutClaim:       `INSERT INTO claims (tenant, claim, uid) VALUES (?, ?, ?) ON CONFLICT (tenant, claim) DO NOTHING`,
	ReleaseClaims:  `DELETE FROM claims WHERE uid = ?`,
	Pins:           `SELECT ` + sqlrow.PinCols + ` FROM pins WHERE source_uid = ? ORDER BY ord`,
	DeletePins:     `DELETE FROM pins WHERE source_uid = ?`,
	InsertPin: `INSERT INTO pins (ord, tenant, space, ` + sqlrow.PinCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	PinsTo: `SELECT ` + sqlrow.PinCols + ` FROM pins WHERE target_uid = ? ORDER BY source_uid, ord`,
	PinsToName: `SELECT ` + sqlrow.PinCols + ` FROM pins
		WHERE tenant = ? AND space = ? AND target_api_version = ? AND target_kind = ? AND target_name = ?
		ORDER BY source_uid, ord`,
	Idempotency: `SELECT ` + sqlrow.IdempotencyValueCols + ` FROM idempotency
		WHERE lane = ? AND tenant = ? AND principal = ? AND space = ? AND key = ?`,
	InsertIdempotency: insertIdempotency,
	PutIdempotency: insertIdempotency + `
		ON CONFLICT (lane, tenant, principal, space, key) DO UPDATE SET
		fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag,
		body = excluded.body, bound_uid = excluded.bound_uid,
		bound_operation = excluded.bound_operation, created_at = excluded.created_at`,
	ClaimIdempotency:  insertIdempotency + ` ON CONFLICT (lane, tenant, principal, space, key) DO NOTHING`,
	RetireIdempotency: `DELETE FROM idempotency WHERE bound_uid = ? AND bound_uid <> ''`,
	ExpireIdempotency: `DELETE FROM idempotency WHERE created_at < ?`,
	RebindIdempotency: `UPDATE idempotency SET bound_uid = ?, bound_operation = ''
		WHERE bound_operation = ? AND bound_operation <> ''`,
	Operation: `SELECT ` + sqlrow.OperationCols + ` FROM operations WHERE id = ?`,
	PutOperation: `INSERT INTO operations (` + sqlrow.OperationCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, action = excluded.action,
		done = excluded.done, request = excluded.request, document = excluded.document,
		target_uid = excluded.target_uid, target_tenant = excluded.target_tenant,
		target_space = excluded.target_space, target_api_version = excluded.target_api_version,
		target_kind = excluded.target_kind, target_name = excluded.target_name,
		not_before = excluded.not_before, created_at = excluded.created_at,
		updated_at = excluded.updated_at`,
	DueOperations: `SELECT ` + sqlrow.OperationCols + ` FROM operations
		WHERE done = 0 AND not_before <= ?
		ORDER BY not_before, created_at, id LIMIT ?`,
	PendingOperation: `SELECT ` + sqlrow.PendingOperationCols + ` FROM operations
		WHERE done = 0 AND target_tenant = ? AND target_space = ? AND target_api_version = ?
		AND target_kind = ? AND target_name = ?
		ORDER BY created_at, id LIMIT 1`,
	BlobSize: `SELECT size FROM blobs WHERE digest = ?`,
	Blob:     `SELECT data FROM blobs WHERE digest = ?`,
	PutBlob: `INSERT INTO blobs (digest, size, data, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`,
	Holds:    `SELECT 1 FROM holdings WHERE tenant = ? AND digest = ?`,
	Hold:     `INSERT INTO holdings (tenant, digest) VALUES (?, ?) ON CONFLICT (tenant, digest) DO NOTHING`,
	Manifest: `SELECT doc FROM manifests WHERE digest = ?`,
	PutManifest: `INSERT INTO manifests (digest, doc, created_at) VALUES (?, ?, ?)
		ON CONFLICT (digest) DO UPDATE SET created_at = excluded.created_at`,
	Upload: `SELECT id, tenant, principal, manifest, manifest_digest, created_at, lane FROM uploads WHERE id = ?`,
	PutUpload: `INSERT INTO uploads (id, tenant, principal, manifest, manifest_digest, created_at, lane)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
		lane = excluded.lane, tenant = excluded.tenant, principal = excluded.principal, manifest = excluded.manifest,
		manifest_digest = excluded.manifest_digest, created_at = excluded.created_at`,
	DeleteUpload: `DELETE FROM uploads WHERE id = ?`,
	Setting:      `SELECT value FROM settings WHERE name = ?`,
	PutSetting:   `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
	// Leases (leases.go).
	Lease:         `SELECT ` + leaseCols + ` FROM leases WHERE name = ?`,
	LeaseInsert:   `INSERT INTO leases (name, ` + leaseCols + `) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
	LeaseTakeover: `UPDATE leases SET holder = ?2, epoch = ?3, expires_at = ?4 WHERE name = ?1`,
	LeaseRenew:    `UPDATE leases SET expires_at = ?4 WHERE name = ?1 AND holder = ?2 AND epoch = ?3`,
	LeaseRelease: `UPDATE leases SET expires_at = CASE WHEN expires_at < ?4 THEN expires_at ELSE ?4 END
		WHERE name = ?1 AND holder = ?2 AND epoch = ?3`,
	LeaseForFence: `SELECT epoch FROM leases WHERE name = ?`,
	// Sealed sensitive values (leases.go).
	SecretPut: `INSERT INTO worker_secrets (` + secretCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (worker, name) DO UPDATE SET tenant = excluded.tenant, space = excluded.space,
		sealed = excluded.sealed, key_id = excluded.key_id, updated_at = excluded.updated_at`,
	SecretDelete: `DELETE FROM worker_secrets WHERE worker = ? AND name = ?`,
	SecretsOf:    `SELECT ` + secretCols + ` FROM worker_secrets WHERE worker = ? ORDER BY name`,
	SecretsAfter: `SELECT ` + secretCols + ` FROM worker_secrets WHERE (worker, name) > (?1, ?2)
		ORDER BY worker, name LIMIT ?3`,
	// edge.objects metadata (objects.go); keys are bound as bytes
	// (KeyBytes), so they compare by bytes.
	Object: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ? AND key = ?`,
	PutObject: `INSERT INTO objects (` + objectCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, key) DO UPDATE SET tenant = excluded.tenant, file = excluded.file, size = excluded.size,
		etag = excluded.etag, content_type = excluded.content_type, uploaded_at = excluded.uploaded_at`,
	DeleteObject: `DELETE FROM objects WHERE bucket = ? AND key = ?`,
	ListObjects: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ?1 AND key >= ?2 AND key > ?3
		ORDER BY key LIMIT ?4`,
	ListObjectsTo: `SELECT ` + objectCols + ` FROM objects WHERE bucket = ?1 AND key >= ?2 AND key > ?3 AND key < ?5
		ORDER BY key LIMIT ?4`,
	ObjectUpload: `SELECT tenant, key, content_type, created_at FROM object_uploads WHERE bucket = ? AND id = ?`,
	PutObjectUpload: `INSERT INTO object_uploads (bucket, id, key, tenant, content_type, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, id) DO NOTHING`,
	DeleteObjectUpload: `DELETE FROM object_uploads WHERE bucket = ? AND id = ?`,
	PutObjectPart: `INSERT INTO object_parts (bucket, upload, number, tenant, file, size, etag) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, upload, number) DO UPDATE SET tenant = excluded.tenant, file = excluded.file,
		size = excluded.size, etag = excluded.etag`,
	ObjectParts: `SELECT tenant, number, file, size, etag FROM object_parts WHERE bucket = ? AND upload = ? ORDER BY number`,
	// Cron firings and the queue writes both stores spell alike (events.go).
	RecordFiring: `INSERT INTO cron_firings (trigger_uid, minute, tenant, state, version, updated_at, epoch) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (trigger_uid, minute) DO NOTHING`,
	Firing: `SELECT tenant, state, version, updated_at, epoch FROM cron_firings WHERE trigger_uid = ? AND minute = ?`,
	MoveFiring: `UPDATE cron_firings SET state = ?4, version = ?5, updated_at = ?6, epoch = ?7
		WHERE trigger_uid = ?1 AND minute = ?2 AND state = ?3`,
	OpenFirings: `SELECT trigger_uid, minute, tenant, state, version, updated_at, epoch FROM cron_firings
		WHERE state IN ('recorded', 'dispatching') AND minute >= ? ORDER BY minute, trigger_uid LIMIT ?`,
	SweepFirings: `DELETE FROM cron_firings WHERE minute < ? AND state NOT IN ('recorded', 'dispatching')`,
	QueueRelease: `UPDATE queue_messages SET claim = '', deliverable_at = ?4, attempts = ?5
		WHERE queue = ?1 AND id = ?2 AND claim = ?3`,
	QueueReleaseClaims: `UPDATE queue_messages SET claim = '', deliverable_at = ?2 WHERE queue = ?1 AND claim <> '' AND claim_epoch < ?3`,
	QueueExpire:        `DELETE FROM queue_messages WHERE queue = ? AND claim = '' AND accepted_at < ?`,
	QueueMessages: `SELECT tenant, id, body, accepted_at, deliverable_at, attempts, claim FROM queue_messages
		WHERE queue = ? ORDER BY deliverable_at, id LIMIT ?`,
	// edge.kv entries (kv.go); keys are bound as bytes (KeyBytes), so they
	// compare by bytes.
	KVGet: `SELECT tenant, value, metadata, expires_at FROM kv_entries
		WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
	KVPut: `INSERT INTO kv_entries (namespace, key, tenant, value, metadata, expires_at, size)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET tenant = excluded.tenant, value = excluded.value,
		metadata = excluded.metadata, expires_at = excluded.expires_at, size = excluded.size`,
	KVDelete: `DELETE FROM kv_entries WHERE namespace = ? AND key = ?`,
	KVList: `SELECT key FROM kv_entries WHERE namespace = ?1 AND key >= ?2 AND key > ?3
		AND (expires_at IS NULL OR expires_at > ?4) ORDER BY key LIMIT ?5`,
	KVListTo: `SELECT key FROM kv_entries WHERE namespace = ?1 AND key >= ?2 AND key > ?3 AND key < ?6
		AND (expires_at IS NULL OR expires_at > ?4) ORDER BY key LIMIT ?5`,
	KVSweep: `DELETE FROM kv_entries WHERE rowid IN (SELECT rowid FROM kv_entries
		WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2) AND expires_at <= ?1`,
	// Migration ledgers (ledger.go).
	LedgerEntries: `SELECT path, digest FROM migration_ledger_entries WHERE database = ? ORDER BY position`,
	// Artifact references and sweeps (maintenance.go); a sweep decides
	// and deletes in one statement that re-checks its condition.
	DropArtifactRefs:  `DELETE FROM artifact_refs WHERE holder = ?`,
	InsertArtifactRef: `INSERT INTO artifact_refs (holder, digest) VALUES (?, ?) ON CONFLICT DO NOTHING`,
	SweepOperations: `DELETE FROM operations WHERE id IN (SELECT id FROM operations
		WHERE done = 1 AND updated_at < ?1 ORDER BY updated_at LIMIT ?2) AND done = 1 AND updated_at < ?1`,
	SweepUploads: `DELETE FROM uploads WHERE id IN (SELECT id FROM uploads
		WHERE created_at < ?1 ORDER BY created_at LIMIT ?2) AND created_at < ?1`,
}

// pgOnly are the PostgreSQL texts whose SQL differs from SQLite's, in
// SQLite's placeholders: the answer bound untyped in a CASE needs its type
// named; a fenced write holds its lease's row shared until the
// transaction ends, so a takeover waits for the writes of the epoch it
// ends to commit; and the KV sweep picks its rows by primary key, a
// PostgreSQL table having no rowid.
var pgOnly = map[Stmt]string{
	UpdateResource: strings.Replace(updateResource, answerCast, "::bytea", 1),
	LeaseForFence:  `SELECT epoch FROM leases WHERE name = ? FOR SHARE`,
	KVSweep: `DELETE FROM kv_entries WHERE (namespace, key) IN (SELECT namespace, key FROM kv_entries
		WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2) AND expires_at <= ?1`,
}

var texts, forUpdate = spell()

func spell() (texts [2][NumStmts]string, forUpdate [NumStmts]string) {
	for s, text := range shared {
		texts[SQLite][s] = text
		if pg, ok := pgOnly[Stmt(s)]; ok {
			text = pg
		}
		texts[Postgres][s] = dollars(text)
		forUpdate[s] = texts[Postgres][s] + " FOR UPDATE"
	}
	return texts, forUpdate
}

// Text is the text of s in dialect d.
func Text(d Dialect, s Stmt) string { return texts[d][s] }

// ForUpdate is the PostgreSQL text of s, a point read, locking the row it
// reads (Executor.ReadLocked).
func ForUpdate(s Stmt) string { return forUpdate[s] }

// dollars spells text's placeholders as PostgreSQL's: ?N as $N, and each
// bare ? as $ and its position among them.
func dollars(text string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '?' {
			b.WriteByte(text[i])
			continue
		}
		b.WriteByte('$')
		if i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9' {
			continue // ?N: its digits follow
		}
		n++
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}
