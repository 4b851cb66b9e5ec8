package lifecycle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// resolvePins resolves every relation in spec within the caller's tenant
// and space, verifies each target's contract and binding rules 1–5 (spec/host-api-v1alpha3.md
// §5.5, §7.3), and returns the pins to store. sourceUID may be "" for a
// resource not created yet.
func (e *Engine) resolvePins(tx store.Tx, def *form.Definition, spec map[string]any, src store.Key, sourceUID string) ([]store.Pin, error) {
	var pins []store.Pin
	for _, ref := range def.References(spec) {
		rel := ref.Relation
		k := store.Key{Tenant: src.Tenant, Space: src.Space, APIVersion: ref.Target.APIVersion, Kind: ref.Target.Kind, Name: ref.Target.Name}
		target, err := tx.Resource(k)
		if errors.Is(err, store.ErrNotFound) {
			return nil, wire.Errorf(wire.ResourceNotFound, "relation %s names %s %q, which does not exist in space %q; create it first", ref.Pointer, ref.Target.Kind, ref.Target.Name, src.Space).
				WithHostCode("relation_target_missing").WithDetail("pointer", "/spec"+ref.Pointer)
		}
		if err != nil {
			return nil, err
		}
		if len(rel.TargetFormRefs) > 0 && !containsRef(rel.TargetFormRefs, target.FormRef) {
			return nil, wire.Errorf(wire.InvalidArgument, "relation %s: %s %q is recorded under form %s, but the relation requires one of %s",
				ref.Pointer, k.Kind, k.Name, target.FormRef, refList(rel.TargetFormRefs)).WithHostCode("relation_target_form_ref").WithDetail("pointer", "/spec"+ref.Pointer)
		}
		targetDef, ok := e.catalog.Form(target.FormRef)
		if !ok {
			return nil, fmt.Errorf("target %s is recorded under form %s, which is no longer installed", k.Name, target.FormRef)
		}
		if ri := rel.RequiredInterface; ri != nil && !providesInterface(targetDef.Definition, *ri) {
			return nil, wire.Errorf(wire.InvalidArgument, "relation %s: %s %q does not provide interface %s, which the relation requires",
				ref.Pointer, k.Kind, k.Name, *ri).WithHostCode("relation_target_interface").WithDetail("pointer", "/spec"+ref.Pointer)
		}
		pin := store.Pin{
			SourceUID: sourceUID, Pointer: ref.Pointer, RelationPointer: rel.Pointer,
			TargetAPIVersion: k.APIVersion, TargetKind: k.Kind, TargetName: k.Name,
			TargetUID: target.UID, TargetFormRef: target.FormRef,
		}
		if rel.Binding != "" {
			b, err := e.verifyBinding(def, targetDef.Definition, ref, target)
			if err != nil {
				return nil, err
			}
			pin.Binding = b
		}
		pins = append(pins, pin)
	}
	return pins, nil
}

// verifyBinding applies binding verification rules 1–5 (spec/host-api-v1alpha3.md §7.3) and
// returns the binding contract as name@version#digest.
func (e *Engine) verifyBinding(src, targetDef *form.Definition, ref form.Reference, target *store.Resource) (string, error) {
	rel := ref.Relation
	ptr := "/spec" + ref.Pointer
	var accepted *form.BindingRef
	for _, b := range src.AcceptedBindings() {
		if b.Name == rel.Binding {
			b := b
			accepted = &b
		}
	}
	if accepted == nil {
		return "", wire.Errorf(wire.InvalidArgument, "binding list %s uses contract %s, which form %s does not accept", rel.BindingList, rel.Binding, src.Ref().Kind).WithHostCode("binding_not_accepted").WithDetail("pointer", ptr)
	}
	bd, ok := e.catalog.Binding(*accepted)
	if !ok {
		return "", wire.Errorf(wire.UnsupportedCapability, "this host does not implement binding contract %s", *accepted).WithHostCode("binding_not_installed").WithDetail("pointer", ptr)
	}
	if src.Role() != bd.SourceRole() {
		return "", wire.Errorf(wire.InvalidArgument, "binding %s may be held only by a %s Form; %s is a %s", accepted.Name, bd.SourceRole(), src.Ref().Kind, src.Role()).WithHostCode("binding_source_role").WithDetail("pointer", ptr)
	}
	allowed := false
	for _, gk := range bd.AllowedTargetForms() {
		if gk.APIVersion == target.APIVersion && gk.Kind == target.Kind {
			allowed = true
		}
	}
	if !allowed {
		return "", wire.Errorf(wire.InvalidArgument, "binding %s cannot target %s %s", accepted.Name, target.APIVersion, target.Kind).WithHostCode("binding_target_form").WithDetail("pointer", ptr)
	}
	if !providesInterface(targetDef, bd.TargetInterface()) {
		return "", wire.Errorf(wire.InvalidArgument, "binding %s needs a target providing %s; %s %q does not", accepted.Name, bd.TargetInterface(), target.Kind, target.Name).WithHostCode("binding_target_interface").WithDetail("pointer", ptr)
	}
	if !bd.ValidBindingName(ref.BindingName) {
		return "", wire.Errorf(wire.InvalidArgument, "binding name %q does not match the %s binding name grammar", ref.BindingName, accepted.Name).WithHostCode("binding_name").WithDetail("pointer", ptr)
	}
	return accepted.Name + "@" + accepted.Version + "#" + accepted.SchemaDigest, nil
}

func providesInterface(def *form.Definition, want form.InterfaceRef) bool {
	for _, p := range def.ProvidedInterfaces() {
		if p == want {
			return true
		}
	}
	return false
}

func containsRef(refs []form.FormRef, r form.FormRef) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

func refList(refs []form.FormRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// drift reports how a pin's target has moved: "" when it still resolves to
// the pinned UID under the pinned FormRef, else ExternalChange or
// DependencyMissing with a host reason.
func drift(tx store.Tx, src store.Key, p store.Pin) (reason, hostReason string, err error) {
	k := store.Key{Tenant: src.Tenant, Space: src.Space, APIVersion: p.TargetAPIVersion, Kind: p.TargetKind, Name: p.TargetName}
	t, err := tx.Resource(k)
	if errors.Is(err, store.ErrNotFound) {
		return "DependencyMissing", fmt.Sprintf("relation %s: target %s %q (uid %s) no longer exists", p.Pointer, p.TargetKind, p.TargetName, p.TargetUID), nil
	}
	if err != nil {
		return "", "", err
	}
	if t.UID != p.TargetUID || t.FormRef != p.TargetFormRef {
		// Compact (hostReason is at most 256 characters): group and kind are
		// the relation's; the two incarnations and exact contracts differ.
		return "ExternalChange", fmt.Sprintf("%s: pinned %s %s@%s; now %s %s@%s", p.Pointer, p.TargetUID, p.TargetFormRef.DefinitionVersion, p.TargetFormRef.SchemaDigest,
			t.UID, t.FormRef.DefinitionVersion, t.FormRef.SchemaDigest), nil
	}
	return "", "", nil
}
