package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// Resource returns the resource at k, or an error wrapping
// store.ErrNotFound.
func (t *tx) Resource(k store.Key) (*store.Resource, error) {
	r, err := sqlrow.ScanResourceAt(t.readLocked(resourceLock(k), qResourceByKey, keyArgs(k)...), k)
	t.noteAbsent(resourceLock(k), err)
	if err != nil {
		return nil, notFound(err, "read resource "+sqlrow.KeyString(k))
	}
	return r, nil
}

// ResourceByUID returns the resource with uid, or an error wrapping
// store.ErrNotFound.
func (t *tx) ResourceByUID(uid string) (*store.Resource, error) {
	r, err := sqlrow.ScanResource(t.readLocked("", `SELECT `+sqlrow.ResourceCols+` FROM resources WHERE uid = $1`, uid))
	if err != nil {
		return nil, notFound(err, "read resource uid "+uid)
	}
	return r, nil
}

// ResourcesOfKind lists every resource of (apiVersion, kind), ordered by
// UID.
func (t *tx) ResourcesOfKind(apiVersion, kind string) ([]*store.Resource, error) {
	var out []*store.Resource
	err := t.queryAll(func(rows pgx.Rows) error {
		r, err := sqlrow.ScanResource(rows)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}, `SELECT `+sqlrow.ResourceCols+` FROM resources WHERE api_version = $1 AND kind = $2 ORDER BY uid`, apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("list resources %s %s: %w", apiVersion, kind, err)
	}
	return out, nil
}

// ResourceByNativeID returns the resource of tenant claiming nativeID, or
// an error wrapping store.ErrNotFound (always for an empty nativeID).
func (t *tx) ResourceByNativeID(tenant, nativeID string) (*store.Resource, error) {
	what := fmt.Sprintf("read resource of tenant %s claiming native id %q", tenant, nativeID)
	if nativeID == "" {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	r, err := sqlrow.ScanResource(t.readLocked(lockName("native", tenant, nativeID), `SELECT `+sqlrow.ResourceCols+` FROM resources
		WHERE tenant = $1 AND native_id = $2 AND native_id <> ''`, tenant, nativeID))
	if err != nil {
		return nil, notFound(err, what)
	}
	return r, nil
}

// CreateResource inserts r under its key's lock. An existing key, UID or
// (tenant, native id) claim — any unique constraint of the table — is an
// error wrapping store.ErrConflict; the transaction stays usable (ON
// CONFLICT DO NOTHING). At a key this transaction read absent (Resource,
// KeyState) the insert is pending: sent with the next statement or the
// COMMIT, a UID or native id found taken then fails the transaction
// (store.Tx, decision spec/decisions/0029-one-read-per-mutation.md).
func (t *tx) CreateResource(r *store.Resource) error {
	what := fmt.Sprintf("create resource %s uid %s", sqlrow.KeyString(r.Key), r.UID)
	if r.UID == "" {
		return fmt.Errorf("%s: no UID", what)
	}
	lock := resourceLock(r.Key)
	if t.held(lock) {
		t.forget(lock)
		t.pending = append(t.pending, pendingWrite{what: what, sql: qInsertResource, args: sqlrow.ResourceArgs(r)})
		return nil
	}
	tag, err := t.execLocked(lock, qInsertResource+` ON CONFLICT DO NOTHING`, sqlrow.ResourceArgs(r)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w (its key, UID or native id is taken)", what, store.ErrConflict)
	}
	return nil
}

// UpdateResource rewrites the resource with r.UID: everything but its UID,
// Key and CreatedAt. A missing UID wraps store.ErrNotFound; a native id
// claimed by another resource of the tenant wraps store.ErrConflict (the
// unique index refuses it inside a savepoint, so the transaction stays
// usable).
func (t *tx) UpdateResource(r *store.Resource) error {
	what := fmt.Sprintf("update resource uid %s", r.UID)
	var tag pgconn.CommandTag
	write := func() error {
		var err error
		tag, err = t.exec(`UPDATE resources SET form_api_version = $1, form_kind = $2,
			form_definition_version = $3, form_schema_digest = $4, package_digest = $5,
			generation = $6, revision = $7, spec = $8, spec_digest = $9, status = $10,
			native_id = $11, updated_at = $12,
			answer = CASE WHEN tenant = $13 AND space = $14 AND api_version = $15 AND kind = $16 AND name = $17 THEN $18::bytea END
			WHERE uid = $19`, sqlrow.ResourceUpdateArgs(r)...)
		return err
	}
	var err error
	if r.NativeID == "" {
		err = write() // no unique index can refuse it
	} else {
		err = t.savepoint(write)
	}
	if isConflict(err) {
		return fmt.Errorf("%s: %w (%v)", what, store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return notFoundOr(nil, what)
	}
	return nil
}

// DeleteResource deletes the resource with uid, its pins (as source, by
// ON DELETE CASCADE), its claims and so its native id claim. A missing
// UID wraps store.ErrNotFound.
func (t *tx) DeleteResource(uid string) error {
	what := "delete resource uid " + uid
	tag, err := t.exec(`DELETE FROM resources WHERE uid = $1`, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return notFoundOr(nil, what)
	}
	if err := t.ReleaseClaims(uid); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// --- Claims ---

// ClaimHolder returns the UID holding claim in tenant, or an error
// wrapping store.ErrNotFound.
func (t *tx) ClaimHolder(tenant, claim string) (string, error) {
	var uid string
	if err := t.readLocked(lockName("claim", tenant, claim), `SELECT uid FROM claims WHERE tenant = $1 AND claim = $2`, tenant, claim).Scan(&uid); err != nil {
		return "", notFound(err, fmt.Sprintf("read holder of claim %q in tenant %s", claim, tenant))
	}
	return uid, nil
}

// PutClaim records that uid holds claim in tenant; putting a claim uid
// already holds is a no-op, one another UID holds wraps store.ErrConflict.
// The primary key decides: of two replicas claiming at once, one wins.
func (t *tx) PutClaim(tenant, claim, uid string) error {
	what := fmt.Sprintf("claim %q in tenant %s for %s", claim, tenant, uid)
	tag, err := t.exec(`INSERT INTO claims (tenant, claim, uid) VALUES ($1, $2, $3)
		ON CONFLICT (tenant, claim) DO NOTHING`, tenant, claim, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	holder, err := t.ClaimHolder(tenant, claim)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if holder != uid {
		return fmt.Errorf("%s: %w: held by %s", what, store.ErrConflict, holder)
	}
	return nil
}

// ReleaseClaims drops every claim uid holds.
func (t *tx) ReleaseClaims(uid string) error {
	if _, err := t.exec(`DELETE FROM claims WHERE uid = $1`, uid); err != nil {
		return fmt.Errorf("release claims of %s: %w", uid, err)
	}
	return nil
}

// --- Pins ---

func (t *tx) pins(sql string, args ...any) ([]store.Pin, error) {
	var pins []store.Pin
	err := t.queryAll(func(rows pgx.Rows) error {
		p, err := sqlrow.ScanPin(rows)
		if err != nil {
			return err
		}
		pins = append(pins, p)
		return nil
	}, sql, args...)
	return pins, err
}

// Pins returns the pins of sourceUID in the order ReplacePins stored
// them; none (nil) for an unknown source.
func (t *tx) Pins(sourceUID string) ([]store.Pin, error) {
	pins, err := t.pins(`SELECT `+sqlrow.PinCols+` FROM pins WHERE source_uid = $1 ORDER BY ord`, sourceUID)
	if err != nil {
		return nil, fmt.Errorf("read pins of %s: %w", sourceUID, err)
	}
	return pins, nil
}

// ReplacePins makes pins, in order, the whole set of sourceUID's pins;
// each pin's SourceUID is taken to be sourceUID. An unknown source wraps
// store.ErrNotFound.
func (t *tx) ReplacePins(sourceUID string, pins []store.Pin) error {
	what := "replace pins of " + sourceUID
	var tenant, space string
	if err := t.queryRow(`SELECT tenant, space FROM resources WHERE uid = $1`, sourceUID).Scan(&tenant, &space); err != nil {
		return notFound(err, what)
	}
	if _, err := t.exec(`DELETE FROM pins WHERE source_uid = $1`, sourceUID); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for i, p := range pins {
		f := p.TargetFormRef
		if _, err := t.exec(`INSERT INTO pins (ord, tenant, space, `+sqlrow.PinCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			i, tenant, space, sourceUID, p.Pointer, p.RelationPointer,
			p.TargetAPIVersion, p.TargetKind, p.TargetName, p.TargetUID, f.APIVersion, f.Kind,
			f.DefinitionVersion, f.SchemaDigest, p.Binding); err != nil {
			return fmt.Errorf("%s: pin %s: %w", what, p.Pointer, err)
		}
	}
	return nil
}

// PinsTo returns every pin holding targetUID, ordered by source UID then
// the source's pin order.
func (t *tx) PinsTo(targetUID string) ([]store.Pin, error) {
	pins, err := t.pins(`SELECT `+sqlrow.PinCols+` FROM pins WHERE target_uid = $1 ORDER BY source_uid, ord`, targetUID)
	if err != nil {
		return nil, fmt.Errorf("read pins to %s: %w", targetUID, err)
	}
	return pins, nil
}

// PinsToName returns every pin of a source in tenant and space naming the
// target (apiVersion, kind, name), whatever UID it holds, ordered as
// PinsTo.
func (t *tx) PinsToName(tenant, space, apiVersion, kind, name string) ([]store.Pin, error) {
	pins, err := t.pins(qPinsToName, tenant, space, apiVersion, kind, name)
	if err != nil {
		return nil, fmt.Errorf("read pins to %s/%s/%s/%s/%s: %w", tenant, space, apiVersion, kind, name, err)
	}
	return pins, nil
}
