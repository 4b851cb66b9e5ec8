package lifecycle

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// commitDelete checks and performs a delete: identity, fences, then the
// dependency scan (spec/host-api-v1alpha3.md §3.4 (9), §4 "a delete's order at commit").
func (e *Engine) commitDelete(tx store.Tx, def *form.Definition, m *Mutation, st *store.KeyState, dry bool, now time.Time) (*Outcome, error) {
	existing := st.Resource
	if existing == nil || existing.FormRef != m.Ref {
		return nil, NotFound(m.Key, m.Ref)
	}
	if m.Generation != existing.Generation {
		return nil, wire.Errorf(wire.GenerationConflict, "expected generation %d but %s %q is at generation %d; read it again", m.Generation, m.Key.Kind, m.Key.Name, existing.Generation)
	}
	if m.IfMatch != 0 && m.IfMatch != existing.Revision {
		return nil, wire.Errorf(wire.RevisionConflict, "If-Match names revision %d but %s %q is at revision %d", m.IfMatch, m.Key.Kind, m.Key.Name, existing.Revision)
	}
	holders, err := tx.PinsTo(existing.UID)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range holders {
		if p.SourceUID == existing.UID || seen[p.SourceUID] {
			continue
		}
		seen[p.SourceUID] = true
		h, err := tx.ResourceByUID(p.SourceUID)
		if err != nil {
			return nil, err
		}
		names = append(names, fmt.Sprintf("%s %q (%s)", h.Kind, h.Name, p.Pointer))
	}
	if len(names) > 0 && !m.OutOfBand {
		sort.Strings(names)
		return nil, wire.Errorf(wire.DependencyInUse, "%s %q is still referenced by %s; delete or repoint them first", m.Key.Kind, m.Key.Name, strings.Join(names, ", ")).
			WithHostCode("relation_pinned").WithDetail("dependents", names)
	}
	if err := e.family.CheckDelete(tx, def, existing); err != nil && !m.OutOfBand {
		return nil, err
	}
	if dry {
		return &Outcome{Action: m.Action}, nil
	}
	extra, err := e.family.Affected(tx, existing)
	if err != nil {
		return nil, err
	}
	if err := tx.DeleteResource(existing.UID); err != nil {
		return nil, err
	}
	if _, err := tx.RetireIdempotency(existing.UID); err != nil {
		return nil, err
	}
	if err := e.derivedPass(tx, existing.Key, existing.UID, st.PinsTo, extra, now); err != nil {
		return nil, err
	}
	return &Outcome{Action: m.Action}, nil
}

// commitObserve re-observes a resource: it may move the revision, never
// the generation (spec/host-api-v1alpha3.md §3.4 (8)).
func (e *Engine) commitObserve(tx store.Tx, def *form.Definition, m *Mutation, existing *store.Resource, dry bool, now time.Time) (*Outcome, error) {
	if existing == nil || existing.FormRef != m.Ref {
		return nil, NotFound(m.Key, m.Ref)
	}
	if m.Generation != existing.Generation {
		return nil, wire.Errorf(wire.GenerationConflict, "expected generation %d but %s %q is at generation %d; read it again", m.Generation, m.Key.Kind, m.Key.Name, existing.Generation)
	}
	if dry {
		return &Outcome{Action: m.Action}, nil
	}
	res := *existing
	changed, err := e.rerender(tx, &res, now)
	if err != nil {
		return nil, err
	}
	if m.TouchStatus && !changed {
		// The probe's touch-status: one host-side status change, the
		// revision only (spec/conformance-probe.md §1).
		res.Revision++
		res.UpdatedAt = now
		if err := tx.UpdateResource(withAnswer(&res)); err != nil {
			return nil, err
		}
	}
	return &Outcome{Action: m.Action, Resource: &res, UID: res.UID}, nil
}

// NotFound is the refusal of a mutation or exact read whose resource k
// does not exist under the FormRef ref (spec/host-api-v1alpha3.md §3.4).
func NotFound(k store.Key, ref form.FormRef) error {
	return wire.Errorf(wire.ResourceNotFound, "%s %q does not exist in space %q under form %s", k.Kind, k.Name, k.Space, ref)
}
