package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// renderStatus computes a resource's status from its stored spec, pins and
// the family rules (spec/host-api-v1alpha3.md §5.2–§5.4). It is a pure function of stored
// specs, relations and UIDs; lastTransitionTime is carried over from the
// previous status while a condition's status and reason hold.
func (e *Engine) renderStatus(tx store.Tx, def *form.Definition, res *store.Resource, pins []store.Pin, now time.Time) ([]byte, error) {
	st := wire.Status{ObservedGeneration: formatCounter(res.Generation)}
	ready := wire.Condition{Type: "Ready", Status: "True", Reason: "Available"}
	for _, p := range pins {
		if p.SourceUID == res.UID && p.TargetUID == res.UID {
			continue
		}
		reason, hostReason, err := drift(tx, res.Key, p)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			ready = wire.Condition{Type: "Ready", Status: "False", Reason: reason, HostReason: truncate(hostReason, 256),
				Message: "a referenced resource was replaced or removed; re-apply (or replace a revision) to re-pin"}
			break
		}
	}
	conds, outputs, err := e.family.Render(tx, def, res)
	if err != nil {
		return nil, err
	}
	if ready.Status == "True" {
		for _, c := range conds {
			if c.Type == "Ready" {
				ready = c
			}
		}
	}
	st.Conditions = append(st.Conditions, ready)
	for _, c := range conds {
		if c.Type != "Ready" {
			st.Conditions = append(st.Conditions, c)
		}
	}
	if names := def.OutputNames(); names != nil {
		if outputs == nil {
			return nil, wire.Errorf(wire.UnsupportedCapability, "form %s declares outputs this host cannot produce", def.Ref())
		}
		if diags := def.ValidateOutputs(outputs); diags != nil {
			return nil, fmt.Errorf("family rendered invalid outputs for %s: %v", def.Ref(), diags)
		}
		st.Outputs = mustJSON(outputs)
	}
	var prev wire.Status
	if len(res.Status) > 0 {
		if err := json.Unmarshal(res.Status, &prev); err != nil {
			return nil, fmt.Errorf("stored status of %s %q: %w", res.Kind, res.Name, err)
		}
	}
	stamp := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.LastTransitionTime = stamp
		for _, p := range prev.Conditions {
			if p.Type == c.Type && p.Status == c.Status && p.Reason == c.Reason {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	if b, ok := st.AppendWire(make([]byte, 0, 160)); ok {
		return b, nil
	}
	return mustJSON(st), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// rerender recomputes res's status and bumps its revision (never its
// generation) when the rendering changed; it reports whether it did.
func (e *Engine) rerender(tx store.Tx, res *store.Resource, now time.Time) (bool, error) {
	in, ok := e.catalog.Form(res.FormRef)
	if !ok {
		return false, nil
	}
	pins, err := tx.Pins(res.UID)
	if err != nil {
		return false, err
	}
	status, err := e.renderStatus(tx, in.Definition, res, pins, now)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			return false, nil // keep the last rendering; the source answers for itself on its next mutation
		}
		return false, err
	}
	if bytes.Equal(status, res.Status) {
		return false, nil
	}
	res.Status = status
	res.Revision++
	res.UpdatedAt = now
	return true, tx.UpdateResource(withAnswer(res))
}

// derivedPass re-renders, once each, every resource in the same tenant and
// space whose rendering the change to subject can affect: its relation
// holders (by address, which covers every UID that lived there: byName,
// the pins naming subject that tx read, store.KeyState.PinsTo) and the
// family's dependents (spec/host-api-v1alpha3.md §5.4). A mutation of subject changes only
// subject's own pins, so byName may be read before its writes.
func (e *Engine) derivedPass(tx store.Tx, subject store.Key, subjectUID string, byName []store.Pin, extra []store.Key, now time.Time) error {
	if len(byName) == 0 && len(extra) == 0 {
		return nil // no holder and no dependent: nothing to re-render (most creates)
	}
	seen := map[string]bool{subjectUID: true}
	var uids []string
	add := func(pins []store.Pin) {
		for _, p := range pins {
			if !seen[p.SourceUID] {
				seen[p.SourceUID] = true
				uids = append(uids, p.SourceUID)
			}
		}
	}
	// A UID lives at one address for ever and every pin records the address
	// it resolved, so the holders by address include the holders by UID.
	add(byName)
	sort.Strings(uids)
	var resources []*store.Resource
	for _, uid := range uids {
		r, err := tx.ResourceByUID(uid)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		resources = append(resources, r)
	}
	for _, k := range extra {
		if k.Tenant != subject.Tenant || k.Space != subject.Space {
			continue
		}
		r, err := tx.Resource(k)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !seen[r.UID] {
			seen[r.UID] = true
			resources = append(resources, r)
		}
	}
	for _, r := range resources {
		if _, err := e.rerender(tx, r, now); err != nil {
			return err
		}
	}
	return nil
}
