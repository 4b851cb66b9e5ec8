package sqlcore

import (
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// --- Resources ---

// Resource returns the resource at k, or an error wrapping
// store.ErrNotFound.
func (c Core) Resource(k store.Key) (*store.Resource, error) {
	lock := ResourceLock(k)
	r, err := sqlrow.ScanResourceAt(c.X.ReadLocked(lock, ResourceByKey, bind(k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name)), k)
	c.X.ReadAbsent(lock, err)
	if err != nil {
		return nil, NotFound(err, "read resource "+sqlrow.KeyString(k))
	}
	return r, nil
}

// ResourceByUID returns the resource with uid, or an error wrapping
// store.ErrNotFound.
func (c Core) ResourceByUID(uid string) (*store.Resource, error) {
	r, err := sqlrow.ScanResource(c.X.ReadLocked(Lock{}, ResourceByUID, bind(uid)))
	if err != nil {
		return nil, NotFound(err, "read resource uid "+uid)
	}
	return r, nil
}

// ResourceByNativeID returns the resource of tenant claiming nativeID, or
// an error wrapping store.ErrNotFound (always for an empty nativeID).
func (c Core) ResourceByNativeID(tenant, nativeID string) (*store.Resource, error) {
	what := fmt.Sprintf("read resource of tenant %s claiming native id %q", tenant, nativeID)
	if nativeID == "" {
		return nil, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	r, err := sqlrow.ScanResource(c.X.ReadLocked(NewLock("native", tenant, nativeID), ResourceByNativeID, bind(tenant, nativeID)))
	if err != nil {
		return nil, NotFound(err, what)
	}
	return r, nil
}

// ResourcesOfKind lists every resource of (apiVersion, kind), ordered by
// UID.
func (c Core) ResourcesOfKind(apiVersion, kind string) ([]*store.Resource, error) {
	var out []*store.Resource
	err := c.X.Query(ResourcesOfKind, func(row sqlrow.Scanner) error {
		r, err := sqlrow.ScanResource(row)
		if err == nil {
			out = append(out, r)
		}
		return err
	}, bind(apiVersion, kind))
	if err != nil {
		return nil, fmt.Errorf("list resources %s %s: %w", apiVersion, kind, err)
	}
	return out, nil
}

// UpdateResource rewrites the resource with r.UID: everything but its UID,
// Key and CreatedAt. A missing UID wraps store.ErrNotFound; a native id
// claimed by another resource of the tenant wraps store.ErrConflict and
// leaves the transaction usable (Executor.ExecUnique; without a native id
// no unique index can refuse the write).
func (c Core) UpdateResource(r *store.Resource) error {
	what := fmt.Sprintf("update resource uid %s", r.UID)
	a := bind(sqlrow.ResourceUpdateArgs(r)...)
	var n int64
	var err error
	if r.NativeID == "" {
		n, err = c.X.Exec(UpdateResource, a)
	} else {
		n, err = c.X.ExecUnique(UpdateResource, a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return NotFoundOr(nil, what)
	}
	return nil
}

// DeleteResource deletes the resource with uid, its pins (as source, by
// ON DELETE CASCADE), its claims and so its native id claim. A missing
// UID wraps store.ErrNotFound.
func (c Core) DeleteResource(uid string) error {
	what := "delete resource uid " + uid
	n, err := c.X.Exec(DeleteResource, bind(uid))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return NotFoundOr(nil, what)
	}
	if err := c.ReleaseClaims(uid); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// --- Claims ---

// ClaimHolder returns the UID holding claim in tenant, or an error
// wrapping store.ErrNotFound.
func (c Core) ClaimHolder(tenant, claim string) (string, error) {
	var uid string
	if err := c.X.ReadLocked(NewLock("claim", tenant, claim), ClaimHolder, bind(tenant, claim)).Scan(&uid); err != nil {
		return "", NotFound(err, fmt.Sprintf("read holder of claim %q in tenant %s", claim, tenant))
	}
	return uid, nil
}

// PutClaim records that uid holds claim in tenant; putting a claim uid
// already holds is a no-op, one another UID holds wraps store.ErrConflict.
// The primary key decides: of two replicas claiming at once, one wins.
func (c Core) PutClaim(tenant, claim, uid string) error {
	what := fmt.Sprintf("claim %q in tenant %s for %s", claim, tenant, uid)
	n, err := c.X.Exec(PutClaim, bind(tenant, claim, uid))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 1 {
		return nil
	}
	holder, err := c.ClaimHolder(tenant, claim)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if holder != uid {
		return fmt.Errorf("%s: %w: held by %s", what, store.ErrConflict, holder)
	}
	return nil
}

// ReleaseClaims drops every claim uid holds.
func (c Core) ReleaseClaims(uid string) error {
	if _, err := c.X.Exec(ReleaseClaims, bind(uid)); err != nil {
		return fmt.Errorf("release claims of %s: %w", uid, err)
	}
	return nil
}

// --- Pins ---

func (c Core) pins(s Stmt, args ...any) ([]store.Pin, error) {
	var pins []store.Pin
	err := c.X.Query(s, func(row sqlrow.Scanner) error {
		p, err := sqlrow.ScanPin(row)
		if err == nil {
			pins = append(pins, p)
		}
		return err
	}, bind(args...))
	return pins, err
}

// Pins returns the pins of sourceUID in the order ReplacePins stored
// them; none (nil) for an unknown source.
func (c Core) Pins(sourceUID string) ([]store.Pin, error) {
	pins, err := c.pins(Pins, sourceUID)
	if err != nil {
		return nil, fmt.Errorf("read pins of %s: %w", sourceUID, err)
	}
	return pins, nil
}

// ReplacePins makes pins, in order, the whole set of sourceUID's pins;
// each pin's SourceUID is taken to be sourceUID. An unknown source wraps
// store.ErrNotFound.
func (c Core) ReplacePins(sourceUID string, pins []store.Pin) error {
	what := "replace pins of " + sourceUID
	var tenant, space string
	if err := c.X.QueryRow(ResourceSpace, bind(sourceUID)).Scan(&tenant, &space); err != nil {
		return NotFound(err, what)
	}
	if _, err := c.X.Exec(DeletePins, bind(sourceUID)); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for i, p := range pins {
		f := p.TargetFormRef
		if _, err := c.X.Exec(InsertPin, bind(i, tenant, space, sourceUID, p.Pointer, p.RelationPointer,
			p.TargetAPIVersion, p.TargetKind, p.TargetName, p.TargetUID, f.APIVersion, f.Kind,
			f.DefinitionVersion, f.SchemaDigest, p.Binding)); err != nil {
			return fmt.Errorf("%s: pin %s: %w", what, p.Pointer, err)
		}
	}
	return nil
}

// PinsTo returns every pin holding targetUID, ordered by source UID then
// the source's pin order.
func (c Core) PinsTo(targetUID string) ([]store.Pin, error) {
	pins, err := c.pins(PinsTo, targetUID)
	if err != nil {
		return nil, fmt.Errorf("read pins to %s: %w", targetUID, err)
	}
	return pins, nil
}

// PinsToName returns every pin of a source in tenant and space naming the
// target (apiVersion, kind, name), whatever UID it holds, ordered as
// PinsTo.
func (c Core) PinsToName(tenant, space, apiVersion, kind, name string) ([]store.Pin, error) {
	pins, err := c.pins(PinsToName, tenant, space, apiVersion, kind, name)
	if err != nil {
		return nil, fmt.Errorf("read pins to %s/%s/%s/%s/%s: %w", tenant, space, apiVersion, kind, name, err)
	}
	return pins, nil
}
