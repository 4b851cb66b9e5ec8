package provider

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// State layouts (decision 0030; the Terraform SDK's state-migration guide;
// ARCHITECTURE.md §1; repo decision 0003). A resource type's schema version
// names the layout of its state. Every earlier layout is FROZEN: its object
// type is data committed once and never derived from the live schema. Each
// layout step is a pure function on the value of its own frozen layout. The
// plugin framework calls exactly one upgrader per prior version, so for
// every prior version the Lineage composes the steps from it to the current
// layout: state of any old version upgrades straight to current.

// priorV0 holds the FROZEN layout-0 object type of every Edge resource
// type, committed once and never regenerated: a JSON object mapping type
// name → tftypes JSON type (the protocol's own type encoding).
//
//go:embed prior/v0.json
var priorV0 []byte

// LayoutStep moves one value from layout From to layout From+1. Upgrade
// is a pure function: old holds every attribute of layout From's frozen
// type (null and absent prior values arrive as nil) and is the step's to
// change; it returns the value in layout From+1 — only attributes that
// layout has, every value known.
type LayoutStep struct {
	From    int64
	Upgrade func(old map[string]any) (map[string]any, error)
}

// Lineage is the layout history of resource types: Version is the current
// schema version (it never goes down); Frozen maps each earlier version to
// its committed layout file (type name → tftypes JSON object type); Steps
// holds one step per earlier version, Steps[i].From == i. A type without a
// frozen layout at some version was never released at it and has no
// upgrader for it.
type Lineage struct {
	Version int64
	Frozen  map[int64][]byte
	Steps   []LayoutStep
}

// EdgeLineage is the layout history of this provider build's types:
// version 1 is the first numbered layout; 0 → 1 is a whole-value carry
// declared against the frozen prior/v0.json (decision 0030 rule 2).
var EdgeLineage = &Lineage{
	Version: SchemaVersion,
	Frozen:  map[int64][]byte{0: priorV0},
	Steps:   []LayoutStep{{From: 0, Upgrade: CarryV0}},
}

// CarryV0 is the Edge layout step 0 → 1: layout 1 holds every attribute of
// layout 0 with its meaning unchanged, so the value is carried whole;
// attributes layout 1 added stay absent (null).
func CarryV0(old map[string]any) (map[string]any, error) { return old, nil }

// Validate checks the lineage's shape: one step per earlier version, in
// order, and no frozen layout at or above Version — a frozen layout there
// would mean the schema version went down (SCHEMA_VERSION_DECREASED) or the
// live layout was frozen.
func (l *Lineage) Validate() error {
	if l.Version < 0 {
		return fmt.Errorf("schema version %d is negative", l.Version)
	}
	if int64(len(l.Steps)) != l.Version {
		return fmt.Errorf("schema version %d needs %d layout steps (one per earlier version); the lineage has %d", l.Version, l.Version, len(l.Steps))
	}
	for i, s := range l.Steps {
		if s.From != int64(i) || s.Upgrade == nil {
			return fmt.Errorf("layout step %d must move layout %d to %d with an upgrade function", i, i, i+1)
		}
	}
	for v, data := range l.Frozen {
		if v < 0 || v >= l.Version {
			return fmt.Errorf("layout %d is frozen but the schema version is %d: a schema version never goes down, and the current layout is never frozen", v, l.Version)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			return fmt.Errorf("frozen layout %d: %w", v, err)
		}
	}
	return nil
}

// Layout returns the frozen object type of typeName at version v; ok is
// false when the type had no layout at v.
func (l *Lineage) Layout(typeName string, v int64) (t tftypes.Object, ok bool, err error) {
	data, ok := l.Frozen[v]
	if !ok {
		return t, false, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return t, false, fmt.Errorf("frozen layout %d: %w", v, err)
	}
	raw, ok := all[typeName]
	if !ok {
		return t, false, nil
	}
	pt, err := tftypes.ParseJSONType(raw) //nolint:staticcheck // the protocol's own type encoding
	if err != nil {
		return t, false, fmt.Errorf("frozen layout %d of %s: %w", v, typeName, err)
	}
	t, ok = pt.(tftypes.Object)
	if !ok {
		return t, false, fmt.Errorf("frozen layout %d of %s is not an object type", v, typeName)
	}
	return t, true, nil
}

// Upgrade moves old, a value of typeName's frozen layout from, straight to
// the current layout current: it runs every step from `from` up, and after
// each step requires the value to conform to the next layout (the frozen
// one, or current after the last step): no attribute that layout lacks, no
// unknown value, every value of its attribute's type. The error names the
// step that broke.
func (l *Lineage) Upgrade(typeName string, from int64, old map[string]any, current tftypes.Object) (map[string]any, error) {
	if from < 0 || from >= l.Version {
		return nil, fmt.Errorf("no upgrade of %s from schema version %d: the current version is %d", typeName, from, l.Version)
	}
	val := copyAttrs(old)
	for v := from; v < l.Version; v++ {
		next, err := l.Steps[v].Upgrade(val)
		if err != nil {
			return nil, fmt.Errorf("layout step %d → %d of %s: %w", v, v+1, typeName, err)
		}
		target, ok := current, true
		if v+1 < l.Version {
			if target, ok, err = l.Layout(typeName, v+1); err != nil || !ok {
				return nil, fmt.Errorf("layout step %d → %d of %s: no frozen layout %d to check it against (%v)", v, v+1, typeName, v+1, err)
			}
		}
		if err := conform(next, target); err != nil {
			return nil, fmt.Errorf("layout step %d → %d of %s: %w", v, v+1, typeName, err)
		}
		val = copyAttrs(next)
	}
	return val, nil
}

// conform checks that v is a value of object type t with every value known.
func conform(v map[string]any, t tftypes.Object) error {
	var stray []string
	for k, e := range v {
		if _, ok := t.AttributeTypes[k]; !ok {
			stray = append(stray, k)
		} else if !known(e) {
			return fmt.Errorf("attribute %s is unknown: upgraded state holds only known values", k)
		}
	}
	if len(stray) > 0 {
		sort.Strings(stray)
		return fmt.Errorf("the value has attributes %v that the target layout lacks (an intermediate or foreign shape)", stray)
	}
	_, err := fromGo(t, v)
	return err
}

// upgrade moves old, a state in the type's frozen layout of version from
// (priorLayout), to the current layout (Lineage.Upgrade), recording it in
// resp; a value the steps refuse is a state-upgrade error.
func (r *Resource) upgrade(ctx context.Context, from int64, old tftypes.Value, resp *outcome) {
	id := identity{Type: r.spec.Name, Code: CodeStateUpgrade}
	attrs, err := attrsOf(old)
	if err == nil {
		e := envelopeOf(attrs)
		id.Space, id.Name = e.Space, e.Name
		var next map[string]any
		if next, err = r.spec.Lineage.Upgrade(r.spec.Name, from, attrs, r.spec.ObjectType); err == nil {
			resp.Diagnostics.Append(r.setState(ctx, &resp.State, next)...)
			return
		}
	}
	resp.Diagnostics.Append(renderError(fmt.Sprintf("Cannot upgrade state written at schema version %d", from), err, id)...)
}

// priorLayout is the type's frozen layout of the earlier version v; false
// when the type was never released at v (or v is not earlier), so that a
// state at v cannot exist and has no upgrader.
func (r *Resource) priorLayout(v int64) (tftypes.Object, bool) {
	l := r.spec.Lineage
	if v < 0 || v >= l.Version {
		return tftypes.Object{}, false
	}
	layout, ok, err := l.Layout(r.spec.Name, v)
	return layout, err == nil && ok
}
