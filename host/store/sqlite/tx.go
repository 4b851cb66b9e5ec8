package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// tx implements store.Tx on one write transaction (*sql.Tx) or one read
// transaction of a reader (readers.go). In a write batch it is shared by
// the batch's functions one after another; done is set between them so a
// function that keeps its Tx cannot use it after returning.
type tx struct {
	// ctx is what the driver gets. user is the caller's context, checked
	// before each statement: a View's statements run under Background so
	// the driver starts no watcher goroutine per statement (repo decision
	// 0022), and
	// a cancelled request stops at its next statement.
	ctx   context.Context
	user  context.Context
	sqlc  sqlConn
	sqlTx *sql.Tx               // the write transaction; nil in a View
	db    *statements           // prepared statements; a View's are bound to its connection
	stmts [numQueries]*sql.Stmt // db's statements bound to sqlTx, made on first use
	done  bool
}

// sqlConn runs an unprepared statement: the *sql.Tx of a write batch or
// the *sql.Conn of a reader.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var _ store.Tx = (*tx)(nil)

var errTxDone = errors.New("transaction used after its function returned")

func newTx(ctx context.Context, sqlTx *sql.Tx, db *statements) *tx {
	return &tx{ctx: ctx, user: ctx, sqlc: sqlTx, sqlTx: sqlTx, db: db}
}

func (t *tx) stmt(q query) *sql.Stmt {
	if t.sqlTx == nil {
		return t.db[q]
	}
	if s := t.stmts[q]; s != nil {
		return s
	}
	s := t.sqlTx.StmtContext(t.ctx, t.db[q])
	t.stmts[q] = s
	return s
}

// usable is nil while t may run a statement.
func (t *tx) usable() error {
	if t.done {
		return errTxDone
	}
	return t.user.Err()
}

func (t *tx) exec(q query, args ...any) (sql.Result, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	return t.stmt(q).ExecContext(t.ctx, args...)
}

func (t *tx) queryRow(q query, args ...any) sqlrow.Scanner {
	if err := t.usable(); err != nil {
		return errRow{err}
	}
	return t.stmt(q).QueryRowContext(t.ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (t *tx) query(q query, args ...any) (*sql.Rows, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	return t.stmt(q).QueryContext(t.ctx, args...)
}

// affected returns how many rows res changed.
func affected(res sql.Result) (int, error) {
	n, err := res.RowsAffected()
	return int(n), err
}

// isConflict reports whether err is a UNIQUE or PRIMARY KEY violation.
func isConflict(err error) bool {
	var e *sqlitedrv.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// notFound turns sql.ErrNoRows into store.ErrNotFound, wrapped with what.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// --- Resources ---

// Resource returns the resource at k, or an error wrapping
// store.ErrNotFound.
func (t *tx) Resource(k store.Key) (*store.Resource, error) {
	r, err := sqlrow.ScanResourceAt(t.queryRow(qResourceByKey, k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name), k)
	if err != nil {
		return nil, notFound(err, "read resource "+sqlrow.KeyString(k))
	}
	return r, nil
}

// ResourceByUID returns the resource with uid, or an error wrapping
// store.ErrNotFound.
func (t *tx) ResourceByUID(uid string) (*store.Resource, error) {
	r, err := sqlrow.ScanResource(t.queryRow(qResourceByUID, uid))
	if err != nil {
		return nil, notFound(err, "read resource uid "+uid)
	}
	return r, nil
}

// ResourceByNativeID returns the resource of tenant claiming nativeID, or
// an error wrapping store.ErrNotFound (always for an empty nativeID).
func (t *tx) ResourceByNativeID(tenant, nativeID string) (*store.Resource, error) {
	what := fmt.Sprintf("read resource of tenant %s claiming native id %q", tenant, nativeID)
	if nativeID == "" {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	r, err := sqlrow.ScanResource(t.queryRow(qResourceByNativeID, tenant, nativeID))
	if err != nil {
		return nil, notFound(err, what)
	}
	return r, nil
}

// ResourcesOfKind lists every resource of (apiVersion, kind), ordered by
// UID.
func (t *tx) ResourcesOfKind(apiVersion, kind string) (_ []*store.Resource, rerr error) {
	what := fmt.Sprintf("list resources %s %s", apiVersion, kind)
	rows, err := t.query(qResourcesOfKind, apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer store.JoinCleanup(&rerr, rows.Close)
	var out []*store.Resource
	for rows.Next() {
		r, err := sqlrow.ScanResource(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// CreateResource inserts r. An existing key, UID or (tenant, native id)
// claim is an error wrapping store.ErrConflict.
func (t *tx) CreateResource(r *store.Resource) error {
	what := func() string { return fmt.Sprintf("create resource %s uid %s", sqlrow.KeyString(r.Key), r.UID) }
	if r.UID == "" {
		return fmt.Errorf("%s: no UID", what())
	}
	_, err := t.exec(qInsertResource, sqlrow.ResourceArgs(r)...)
	if isConflict(err) {
		return fmt.Errorf("%s: %w (%v)", what(), store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what(), err)
	}
	return nil
}

// UpdateResource rewrites the resource with r.UID: everything but its UID,
// Key and CreatedAt. A missing UID wraps store.ErrNotFound; a native id
// claimed by another resource of the tenant wraps store.ErrConflict.
func (t *tx) UpdateResource(r *store.Resource) error {
	what := fmt.Sprintf("update resource uid %s", r.UID)
	res, err := t.exec(qUpdateResource, sqlrow.ResourceUpdateArgs(r)...)
	if isConflict(err) {
		return fmt.Errorf("%s: %w (%v)", what, store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := affected(res); err != nil || n == 0 {
		return notFoundOr(err, what)
	}
	return nil
}

// DeleteResource deletes the resource with uid, its pins (as source, by
// ON DELETE CASCADE), its claims and so its native id claim. A missing
// UID wraps store.ErrNotFound.
func (t *tx) DeleteResource(uid string) error {
	what := "delete resource uid " + uid
	res, err := t.exec(qDeleteResource, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := affected(res); err != nil || n == 0 {
		return notFoundOr(err, what)
	}
	if _, err := t.exec(qReleaseClaims, uid); err != nil {
		return fmt.Errorf("%s: release claims: %w", what, err)
	}
	return nil
}

// --- Claims ---

// ClaimHolder returns the UID holding claim in tenant, or an error
// wrapping store.ErrNotFound.
func (t *tx) ClaimHolder(tenant, claim string) (string, error) {
	var uid string
	if err := t.queryRow(qClaimHolder, tenant, claim).Scan(&uid); err != nil {
		return "", notFound(err, fmt.Sprintf("read holder of claim %q in tenant %s", claim, tenant))
	}
	return uid, nil
}

// PutClaim records that uid holds claim in tenant; putting a claim uid
// already holds is a no-op, one another UID holds wraps store.ErrConflict.
func (t *tx) PutClaim(tenant, claim, uid string) error {
	what := fmt.Sprintf("claim %q in tenant %s for %s", claim, tenant, uid)
	res, err := t.exec(qPutClaim, tenant, claim, uid)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := affected(res); err != nil || n == 1 {
		return err
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
	if _, err := t.exec(qReleaseClaims, uid); err != nil {
		return fmt.Errorf("release claims of %s: %w", uid, err)
	}
	return nil
}

func notFoundOr(err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, store.ErrNotFound)
}

// --- Pins ---

func scanPins(rows *sql.Rows, err error) (_ []store.Pin, rerr error) {
	if err != nil {
		return nil, err
	}
	defer store.JoinCleanup(&rerr, rows.Close)
	var pins []store.Pin
	for rows.Next() {
		p, err := sqlrow.ScanPin(rows)
		if err != nil {
			return nil, err
		}
		pins = append(pins, p)
	}
	return pins, rows.Err()
}

// Pins returns the pins of sourceUID in the order ReplacePins stored
// them; none (nil) for an unknown source.
func (t *tx) Pins(sourceUID string) ([]store.Pin, error) {
	pins, err := scanPins(t.query(qPins, sourceUID))
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
	if err := t.queryRow(qResourceSpace, sourceUID).Scan(&tenant, &space); err != nil {
		return notFound(err, what)
	}
	if _, err := t.exec(qDeletePins, sourceUID); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for i, p := range pins {
		f := p.TargetFormRef
		if _, err := t.exec(qInsertPin, i, tenant, space, sourceUID, p.Pointer, p.RelationPointer,
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
	pins, err := scanPins(t.query(qPinsTo, targetUID))
	if err != nil {
		return nil, fmt.Errorf("read pins to %s: %w", targetUID, err)
	}
	return pins, nil
}

// PinsToName returns every pin of a source in tenant and space naming the
// target (apiVersion, kind, name), whatever UID it holds, ordered as
// PinsTo.
func (t *tx) PinsToName(tenant, space, apiVersion, kind, name string) ([]store.Pin, error) {
	pins, err := scanPins(t.query(qPinsToName, tenant, space, apiVersion, kind, name))
	if err != nil {
		return nil, fmt.Errorf("read pins to %s/%s/%s/%s/%s: %w", tenant, space, apiVersion, kind, name, err)
	}
	return pins, nil
}
