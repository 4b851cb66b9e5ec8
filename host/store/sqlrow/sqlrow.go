// Package sqlrow is the row layout the SQL stores share (host/store/sqlite
// and host/store/postgres have the same tables and columns, decision
// spec/decisions/0011-postgres-concurrency.md): the column lists their
// queries select, the scanners that turn a row into a store type, and the
// value encodings — times as Unix nanoseconds (0 = the zero Time, read
// back in UTC), nil bytes as empty, booleans as 0/1.
package sqlrow

import (
	"fmt"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// Column lists, in the order the scanners read them.
const (
	ResourceCols = `uid, tenant, space, api_version, kind, name,
		form_api_version, form_kind, form_definition_version, form_schema_digest,
		package_digest, generation, revision, spec, spec_digest, status, native_id,
		created_at, updated_at`
	PinCols = `source_uid, pointer, relation_pointer, target_api_version, target_kind,
		target_name, target_uid, target_form_api_version, target_form_kind,
		target_form_definition_version, target_form_schema_digest, binding`
	IdempotencyCols = `lane, tenant, principal, space, key, fingerprint, status, etag, body,
		bound_uid, bound_operation, created_at`
	// ResourceValueCols and IdempotencyValueCols leave out the key a
	// lookup by key already holds: fewer columns read per row.
	// ResourceStateCols are a resource's columns after its key and FormRef.
	ResourceValueCols = `uid, form_api_version, form_kind, form_definition_version, form_schema_digest,
		` + ResourceStateCols
	ResourceStateCols = `package_digest, generation, revision, spec, spec_digest, status, native_id,
		created_at, updated_at`
	// ResourceWriteCols are the columns ResourceArgs fill: ResourceCols
	// and the stored answer (store.Resource.Answer, the bytes the host
	// encoded; spec/decisions/0046-stored-answer.md,
	// spec/decisions/0065-store-keeps-answer-bytes.md).
	ResourceWriteCols = ResourceCols + `, answer`
	// ExactAnswerCols are what ScanExactAnswer reads: the UID, the
	// counters and the stored answer, then, only for a row whose answer is
	// NULL (written before migration 00003 on SQLite, 00005 on
	// PostgreSQL, by a writer that left it unchanged, or given none: see
	// answer), the columns the host encodes its answer from; the key and
	// FormRef are the lookup's.
	ExactAnswerCols = `uid, generation, revision, answer,
		CASE WHEN answer IS NULL THEN package_digest ELSE '' END,
		CASE WHEN answer IS NULL THEN spec END,
		CASE WHEN answer IS NULL THEN status END`
	IdempotencyValueCols = `fingerprint, status, etag, body, bound_uid, bound_operation, created_at`
	// PendingOperationCols leave out the target and done of a lookup of
	// the unfinished operation targeting a key.
	PendingOperationCols = `id, tenant, principal, action, request, document, target_uid,
		not_before, created_at, updated_at, lane`
	OperationCols = `id, tenant, principal, action, done, request, document, target_uid,
		target_tenant, target_space, target_api_version, target_kind, target_name,
		not_before, created_at, updated_at, lane`
)

// Scanner is one row of either driver.
type Scanner interface{ Scan(dest ...any) error }

// ScanResource reads a row of ResourceCols.
func ScanResource(row Scanner) (*store.Resource, error) {
	var r store.Resource
	return scanResource(row, &r, true)
}

// ScanResourceAt reads a row of ResourceValueCols of the resource at k.
func ScanResourceAt(row Scanner, k store.Key) (*store.Resource, error) {
	r := store.Resource{Key: k}
	return scanResource(row, &r, false)
}

// ExactWhat names an exact read of the resource at k under ref, for its
// errors.
func ExactWhat(k store.Key, ref form.FormRef) string {
	return "read resource " + KeyString(k) + " under " + ref.String()
}

// ScanExactAnswer reads a row of ExactAnswerCols of the resource at k
// created under ref: its stored answer, or, when it has none, the
// columns the host encodes it from (store.Answer.Resource).
func ScanExactAnswer(row Scanner, k store.Key, ref form.FormRef) (*store.Answer, error) {
	r := store.Resource{Key: k, FormRef: ref}
	var body []byte
	if err := row.Scan(&r.UID, &r.Generation, &r.Revision, &body, &r.PackageDigest, &r.Spec, &r.Status); err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return &store.Answer{UID: r.UID, Generation: r.Generation, Revision: r.Revision, Resource: &r}, nil
	}
	return &store.Answer{UID: r.UID, Generation: r.Generation, Revision: r.Revision, Body: body}, nil
}

// scanResource reads the UID, the key columns when the row has them, the
// FormRef columns, then ResourceStateCols.
func scanResource(row Scanner, r *store.Resource, key bool) (*store.Resource, error) {
	var created, updated int64
	n := 14 // UID, the FormRef and ResourceStateCols
	if key {
		n += 5
	}
	dest := make([]any, 0, n)
	dest = append(dest, &r.UID)
	if key {
		dest = append(dest, &r.Tenant, &r.Space, &r.APIVersion, &r.Kind, &r.Name)
	}
	dest = append(dest, &r.FormRef.APIVersion, &r.FormRef.Kind, &r.FormRef.DefinitionVersion, &r.FormRef.SchemaDigest)
	dest = append(dest, &r.PackageDigest, &r.Generation, &r.Revision, &r.Spec, &r.SpecDigest, &r.Status, &r.NativeID,
		&created, &updated)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = FromUnixNano(created), FromUnixNano(updated)
	return r, nil
}

// ResourceArgs are r's values in ResourceWriteCols order.
func ResourceArgs(r *store.Resource) []any {
	return []any{r.UID, r.Tenant, r.Space, r.APIVersion, r.Kind, r.Name,
		r.FormRef.APIVersion, r.FormRef.Kind, r.FormRef.DefinitionVersion, r.FormRef.SchemaDigest,
		r.PackageDigest, r.Generation, r.Revision, Blob(r.Spec), r.SpecDigest, Blob(r.Status), r.NativeID,
		UnixNano(r.CreatedAt), UnixNano(r.UpdatedAt), answer(r)}
}

// ResourceUpdateArgs are the values an update rewrites — everything but
// the UID, key and CreatedAt — then r's key (tenant, space, apiVersion,
// kind, name) and answer, followed by the UID. The update stores the
// answer only when the row's key is r's (the answer shows the key, which
// an update does not rewrite), else NULL.
func ResourceUpdateArgs(r *store.Resource) []any {
	return []any{r.FormRef.APIVersion, r.FormRef.Kind, r.FormRef.DefinitionVersion, r.FormRef.SchemaDigest,
		r.PackageDigest, r.Generation, r.Revision, Blob(r.Spec), r.SpecDigest, Blob(r.Status),
		r.NativeID, UnixNano(r.UpdatedAt), r.Tenant, r.Space, r.APIVersion, r.Kind, r.Name, answer(r), r.UID}
}

// answer is the answer column of r's row: r.Answer, the bytes the host
// gave, or NULL when it gave none and for an empty spec or status, which
// is stored as empty bytes that a store may read back as nil (JSON null)
// or as empty (no JSON): the exact read then returns what it reads back,
// as Tx.Resource does, for the host to encode.
func answer(r *store.Resource) any {
	if len(r.Spec) == 0 || len(r.Status) == 0 || len(r.Answer) == 0 {
		return nil
	}
	return r.Answer
}

// ScanPin reads a row of PinCols.
func ScanPin(row Scanner) (store.Pin, error) {
	var p store.Pin
	f := &p.TargetFormRef
	err := row.Scan(&p.SourceUID, &p.Pointer, &p.RelationPointer, &p.TargetAPIVersion,
		&p.TargetKind, &p.TargetName, &p.TargetUID, &f.APIVersion, &f.Kind,
		&f.DefinitionVersion, &f.SchemaDigest, &p.Binding)
	return p, err
}

// ScanIdempotency reads a row of IdempotencyCols.
func ScanIdempotency(row Scanner) (*store.Idempotency, error) {
	var r store.Idempotency
	return scanIdempotency(row, &r, &r.Lane, &r.Tenant, &r.Principal, &r.Space, &r.Key)
}

// ScanIdempotencyAt reads a row of IdempotencyValueCols of the record
// with the given key.
func ScanIdempotencyAt(row Scanner, k store.IdempotencyKey) (*store.Idempotency, error) {
	r := store.Idempotency{Lane: k.Lane, Tenant: k.Tenant, Principal: k.Principal, Space: k.Space, Key: k.Key}
	return scanIdempotency(row, &r)
}

func scanIdempotency(row Scanner, r *store.Idempotency, key ...any) (*store.Idempotency, error) {
	var created int64
	dest := make([]any, 0, 12)
	dest = append(append(dest, key...), &r.Fingerprint, &r.Status, &r.ETag,
		&r.Body, &r.BoundUID, &r.BoundOperation, &created)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	r.CreatedAt = FromUnixNano(created)
	return r, nil
}

// IdempotencyArgs are r's values in IdempotencyCols order.
func IdempotencyArgs(r *store.Idempotency) []any {
	return []any{r.Lane, r.Tenant, r.Principal, r.Space, r.Key, r.Fingerprint,
		r.Status, r.ETag, Blob(r.Body), r.BoundUID, r.BoundOperation, UnixNano(r.CreatedAt)}
}

// ScanOperation reads a row of OperationCols.
func ScanOperation(row Scanner) (*store.Operation, error) {
	var op store.Operation
	var done, notBefore, created, updated int64
	k := &op.Target
	err := row.Scan(&op.ID, &op.Tenant, &op.Principal, &op.Action, &done, &op.Request,
		&op.Document, &op.TargetUID, &k.Tenant, &k.Space, &k.APIVersion, &k.Kind, &k.Name,
		&notBefore, &created, &updated, &op.Lane)
	if err != nil {
		return nil, err
	}
	op.Done = done != 0
	op.NotBefore, op.CreatedAt, op.UpdatedAt = FromUnixNano(notBefore), FromUnixNano(created), FromUnixNano(updated)
	return &op, nil
}

// ScanPendingOperation reads a row of PendingOperationCols of the
// unfinished operation targeting k.
func ScanPendingOperation(row Scanner, k store.Key) (*store.Operation, error) {
	op := store.Operation{Target: k}
	var notBefore, created, updated int64
	err := row.Scan(&op.ID, &op.Tenant, &op.Principal, &op.Action, &op.Request,
		&op.Document, &op.TargetUID, &notBefore, &created, &updated, &op.Lane)
	if err != nil {
		return nil, err
	}
	op.NotBefore, op.CreatedAt, op.UpdatedAt = FromUnixNano(notBefore), FromUnixNano(created), FromUnixNano(updated)
	return &op, nil
}

// OperationArgs are op's values in OperationCols order.
func OperationArgs(op *store.Operation) []any {
	k := op.Target
	return []any{op.ID, op.Tenant, op.Principal, op.Action, BoolInt(op.Done),
		Blob(op.Request), Blob(op.Document), op.TargetUID, k.Tenant, k.Space, k.APIVersion,
		k.Kind, k.Name, UnixNano(op.NotBefore), UnixNano(op.CreatedAt), UnixNano(op.UpdatedAt), op.Lane}
}

// UnixNano stores t as Unix nanoseconds, the zero Time as 0.
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromUnixNano reads UnixNano's encoding back, in UTC.
func FromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Blob stores nil as an empty value (the byte columns are NOT NULL).
func Blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// BoolInt stores a boolean as 0 or 1.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// KeyString names k in errors: tenant/space/apiVersion/kind/name.
func KeyString(k store.Key) string {
	return fmt.Sprintf("%s/%s/%s/%s/%s", k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name)
}
