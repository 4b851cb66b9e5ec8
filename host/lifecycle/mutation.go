package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Mutation is an accepted mutation, complete enough to be committed now or
// later by the operation worker: it is stored as the operation's request
// (store.Operation.Request, this type's JSON), so its JSON names never
// change. The host builds it from a request's intake
// (spec/host-api-v1alpha3.md §3.4 (5), (7), (8), (9)).
type Mutation struct {
	Action        store.Action `json:"action"`
	Principal     string       `json:"principal"`
	Key           store.Key    `json:"key"`
	Ref           form.FormRef `json:"ref"`
	Package       string       `json:"package,omitempty"`
	Spec          []byte       `json:"spec,omitempty"` // canonical materialised spec
	SpecDigest    string       `json:"specDigest,omitempty"`
	Create        bool         `json:"create,omitempty"` // If-None-Match: *
	Generation    int64        `json:"generation,omitempty"`
	ExpectedUID   string       `json:"expectedUid,omitempty"`
	IfMatch       int64        `json:"ifMatch,omitempty"`
	PrepareDigest string       `json:"prepareDigest,omitempty"`
	NativeID      string       `json:"nativeId,omitempty"`
	AcceptedUID   string       `json:"acceptedUid,omitempty"` // incarnation bound at accept time
	OutOfBand     bool         `json:"outOfBand,omitempty"`   // probe external-change: a delete the backend did, unguarded
	TouchStatus   bool         `json:"touchStatus,omitempty"` // probe touch-status: one host-side status change
	PollDriven    bool         `json:"pollDriven,omitempty"`  // probe async: committed by the caller's polls, never the worker
	Polls         int          `json:"polls,omitempty"`       // polls answered pending so far (poll-driven only)
	OperationID   string       `json:"-"`                     // set while the worker commits its own operation
	// Lane is the name of the lane the mutation came in on: it binds the
	// prepareDigest and the operation (spec/lane-v1beta1.md §2.5 rules
	// 4–5). An operation keeps it in its own column (store.Operation.Lane),
	// which Settle copies back.
	Lane string `json:"-"`
	// Worked out before the transaction (BeforeCommit), read-only in it;
	// zero to work them out in commit.
	createBinding string         // the PrepareDigest a create must carry
	spec          map[string]any // Spec decoded (numberSpec)
}

// BeforeCommit works out, outside the transaction, what a commit of m
// needs that reads nothing in it: the decoded spec, and the prepare
// binding of a create, which binds no uid and generation 0
// (spec/host-api-v1alpha3.md §3.4 (4)). The commit still decides
// everything inside the transaction; this only shortens the one writer's
// work on SQLite (spec/decisions/0031-create-work-off-the-writer.md). A
// spec that does not decode is left for the commit to refuse.
func (e *Engine) BeforeCommit(m *Mutation) {
	if m.Action != store.ActionApply && m.Action != store.ActionImport {
		return
	}
	if spec, err := numberSpec(m.Spec); err == nil {
		m.spec = spec
	}
	if m.Action == store.ActionApply && m.Create {
		m.createBinding = e.PrepareDigest(m.Lane, m.Key, m.Ref, m.SpecDigest, "", 0)
	}
}

// Preload runs the family's Preload (Preloader) for an apply or import of
// m in a read transaction of st, before the write transaction; m's spec
// must have decoded (BeforeCommit). It decides nothing: an error is the
// read transaction's, for the caller to log; the commit decides.
func (e *Engine) Preload(ctx context.Context, st store.Store, m *Mutation) error {
	p, ok := e.family.(Preloader)
	if !ok || m.spec == nil || (m.Action != store.ActionApply && m.Action != store.ActionImport) {
		return nil
	}
	in, ok := e.catalog.Form(m.Ref)
	if !ok || !p.Preloads(in.Definition) {
		return nil
	}
	return st.View(ctx, func(tx store.Tx) error {
		p.Preload(ctx, tx, in.Definition, m.Key, m.spec)
		return nil
	})
}

// Commit runs every check of m against the store as tx sees it and writes
// it (commit). st is the key's state read in tx (store.Tx.KeyState), nil
// to read it here. A refusal is a *wire.Error and tx must not commit the
// caller's writes either; any other error is the store's.
func (e *Engine) Commit(tx store.Tx, m *Mutation, st *store.KeyState, now time.Time) (*Outcome, error) {
	return e.commit(tx, m, st, false, now)
}

// commit runs every check of a mutation against the store as the
// transaction sees it and, unless dry, writes it. Order (spec/host-api-v1alpha3.md §3.4 (5)):
// incarnation binding, relations and family rules, fences, capability,
// prepare binding, the family's records (Family.Record), then the write
// and the derived rendering pass. st is
// the key's state read in tx (store.Tx.KeyState), nil to read it here.
func (e *Engine) commit(tx store.Tx, m *Mutation, st *store.KeyState, dry bool, now time.Time) (*Outcome, error) {
	in, ok := e.catalog.Form(m.Ref)
	if !ok {
		return nil, wire.Errorf(wire.FormUnknown, "form %s is not installed on this host", m.Ref)
	}
	def := in.Definition
	if st == nil {
		var err error
		if st, err = tx.KeyState(m.Key, nil); err != nil {
			return nil, err
		}
	}
	existing := st.Resource
	if m.AcceptedUID != "" {
		// The name may now be held by another incarnation, even under another
		// definition version: that is uid_mismatch, never not-found
		// (spec/conformance-probe.md §2).
		if existing == nil {
			return nil, wire.Errorf(wire.ResourceNotFound, "%s %q no longer exists; the accepted operation has nothing to act on", m.Key.Kind, m.Key.Name)
		}
		if existing.UID != m.AcceptedUID {
			return nil, wire.Errorf(wire.UIDMismatch, "%s %q is now incarnation %s, not %s, which the operation was accepted for", m.Key.Kind, m.Key.Name, existing.UID, m.AcceptedUID)
		}
	}
	// A pending operation holds the incarnation it was accepted for (or, for
	// a create, the free name); once that incarnation is gone the name is
	// free again and the operation will end uid_mismatch or not found.
	// An out-of-band loss (probe external-change) is never held up.
	if op := st.Pending; op != nil && op.ID != m.OperationID && !m.OutOfBand &&
		(op.TargetUID == "" || (existing != nil && existing.UID == op.TargetUID)) {
		if op.Lane != m.Lane && op.Lane != "" && m.Lane != "" {
			// The id is a handle of the other lane (spec/lane-v1beta1.md
			// §2.5 rule 4): say where to poll it.
			return nil, wire.Errorf(wire.ResourceBusy, "%s %q has operation %s in progress on lane %s (poll it there); retry when it settles", m.Key.Kind, m.Key.Name, op.ID, op.Lane)
		}
		return nil, wire.Errorf(wire.ResourceBusy, "%s %q has operation %s in progress; retry when it settles", m.Key.Kind, m.Key.Name, op.ID)
	}
	switch m.Action {
	case store.ActionDelete:
		return e.commitDelete(tx, def, m, st, dry, now)
	case store.ActionObserve:
		return e.commitObserve(tx, def, m, existing, dry, now)
	}
	sourceUID := ""
	if existing != nil {
		sourceUID = existing.UID
	}
	spec := m.spec
	if spec == nil {
		var err error
		if spec, err = numberSpec(m.Spec); err != nil {
			return nil, err
		}
	}
	pins, err := e.resolvePins(tx, def, spec, m.Key, sourceUID)
	if err != nil {
		return nil, err
	}
	if err := e.fence(def, m, existing); err != nil {
		return nil, err
	}
	if m.Action == store.ActionApply {
		want := m.createBinding
		if !m.Create || want == "" {
			uid, gen := "", int64(0)
			if !m.Create {
				uid, gen = existing.UID, existing.Generation
			}
			want = e.PrepareDigest(m.Lane, m.Key, m.Ref, m.SpecDigest, uid, gen)
		}
		if m.PrepareDigest != want {
			return nil, wire.Errorf(wire.InvalidArgument, "review.prepareDigest does not bind this request: the spec, resource, generation, tenant or lane differ from what was prepared; prepare again on this lane and apply the new digest").WithHostCode("prepare_binding_mismatch")
		}
	}
	if m.Action == store.ActionImport {
		if err := claimNativeID(tx, m, existing); err != nil {
			return nil, err
		}
	}
	res := &store.Resource{Key: m.Key, FormRef: m.Ref, PackageDigest: m.Package, Spec: m.Spec, SpecDigest: m.SpecDigest, NativeID: m.NativeID, CreatedAt: now, UpdatedAt: now}
	creating := existing == nil
	if creating {
		if err := e.checkResourceQuota(tx, m.Key.Tenant); err != nil {
			return nil, err
		}
		res.UID, res.Generation, res.Revision = newUID(), 1, 1
	} else {
		cp := *existing
		res = &cp
		if res.SpecDigest != m.SpecDigest {
			res.Generation++
			res.Revision++
			res.Spec, res.SpecDigest = m.Spec, m.SpecDigest
		}
		if m.NativeID != "" {
			res.NativeID = m.NativeID
		}
		res.UpdatedAt = now
	}
	if err := e.family.CheckCommit(tx, def, res, creating); err != nil {
		return nil, err
	}
	if !dry {
		if err := e.family.Record(tx, def, res); err != nil {
			return nil, err
		}
	}
	for i := range pins {
		pins[i].SourceUID = res.UID
	}
	status, err := e.renderStatus(tx, def, res, pins, now)
	if err != nil {
		return nil, err
	}
	if dry {
		return &Outcome{Action: m.Action}, nil
	}
	if creating {
		res.Status = status
		if err := tx.CreateResource(withAnswer(res)); err != nil {
			return nil, err
		}
	} else {
		oldPins, err := tx.Pins(res.UID)
		if err != nil {
			return nil, err
		}
		changed := string(status) != string(existing.Status) || !samePins(oldPins, pins) || res.Generation != existing.Generation || res.NativeID != existing.NativeID
		if changed && res.Generation == existing.Generation {
			res.Revision++
		}
		res.Status = status
		if changed {
			if err := tx.UpdateResource(withAnswer(res)); err != nil {
				return nil, err
			}
		}
	}
	if !creating || len(pins) > 0 { // a new incarnation holds no pins yet
		if err := tx.ReplacePins(res.UID, pins); err != nil {
			return nil, err
		}
	}
	if err := e.family.Persist(tx, def, res); err != nil {
		return nil, err
	}
	extra, err := e.family.Affected(tx, res)
	if err != nil {
		return nil, err
	}
	if err := e.derivedPass(tx, res.Key, res.UID, st.PinsTo, extra, now); err != nil {
		return nil, err
	}
	return &Outcome{Action: m.Action, Resource: res, Created: creating, UID: res.UID}, nil
}

// fence applies the create or update preconditions and the role and
// capability rules (spec/host-api-v1alpha3.md §3.4 (5) steps 5–6).
func (e *Engine) fence(def *form.Definition, m *Mutation, existing *store.Resource) error {
	if m.Create {
		if existing != nil {
			return wire.Errorf(wire.GenerationConflict, "%s %q already exists in space %q (If-None-Match: * requires a free name); choose another name or update it", m.Key.Kind, m.Key.Name, m.Key.Space).WithHostCode("name_taken")
		}
		return nil
	}
	if existing == nil || existing.FormRef != m.Ref {
		return wire.Errorf(wire.ResourceNotFound, "%s %q does not exist in space %q under form %s", m.Key.Kind, m.Key.Name, m.Key.Space, m.Ref)
	}
	if m.ExpectedUID != "" && m.ExpectedUID != existing.UID {
		return wire.Errorf(wire.UIDMismatch, "expected uid %s but %s %q is incarnation %s", m.ExpectedUID, m.Key.Kind, m.Key.Name, existing.UID)
	}
	if m.Generation != existing.Generation {
		return wire.Errorf(wire.GenerationConflict, "expected generation %d but %s %q is at generation %d; read it again", m.Generation, m.Key.Kind, m.Key.Name, existing.Generation)
	}
	if def.Role() == form.RoleRevision {
		return wire.Errorf(wire.InvalidArgument, "%s is a revision Form: a revision is never updated; create a new revision under a new name", m.Key.Kind).WithHostCode("revision_immutable")
	}
	if existing.SpecDigest != m.SpecDigest && !def.Has(form.CapUpdate) {
		return wire.Errorf(wire.InvalidArgument, "%s has no update capability; replace the resource to change its spec", m.Key.Kind).WithHostCode("update_not_supported")
	}
	if ptr, err := changedImmutable(def, existing, m); err != nil {
		return err
	} else if ptr != "" {
		return wire.Errorf(wire.InvalidArgument, "%s %s is immutable (immutableFields); it cannot change in place: replace the resource to change it", m.Key.Kind, ptr).
			WithHostCode("immutable_field").WithDetail("pointer", "/spec"+ptr)
	}
	return nil
}

// changedImmutable returns the first immutableFields pointer whose value
// differs between the stored spec and the mutation's, "" when none
// (spec/host-api-v1alpha3.md §6.1: an immutable field cannot change in place).
func changedImmutable(def *form.Definition, existing *store.Resource, m *Mutation) (string, error) {
	if existing.SpecDigest == m.SpecDigest {
		return "", nil
	}
	old, err := numberSpec(existing.Spec)
	if err != nil {
		return "", err
	}
	cur, err := numberSpec(m.Spec)
	if err != nil {
		return "", err
	}
	for _, ptr := range def.ImmutableFields() {
		a, aok := pointerValue(old, ptr)
		b, bok := pointerValue(cur, ptr)
		if aok != bok || string(mustJSON(a)) != string(mustJSON(b)) {
			return ptr, nil
		}
	}
	return "", nil
}

// pointerValue resolves an RFC 6901 pointer in a decoded document.
func pointerValue(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	for tok := range jsontext.Pointer(ptr).Tokens() {
		switch n := doc.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(n) {
				return nil, false
			}
			doc = n[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// arrayIndex reads an RFC 6901 array index: "0" or digits without a
// leading zero (no sign, no "-", which names the element past the end).
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

func claimNativeID(tx store.Tx, m *Mutation, existing *store.Resource) error {
	if existing != nil && existing.NativeID != "" && existing.NativeID != m.NativeID {
		return wire.Errorf(wire.ImportConflict, "%s %q already claims another native identity; a recorded claim never changes", m.Key.Kind, m.Key.Name)
	}
	holder, err := tx.ResourceByNativeID(m.Key.Tenant, m.NativeID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if existing == nil || holder.UID != existing.UID {
		return wire.Errorf(wire.ImportConflict, "the native identity is already claimed by another resource in this tenant (%s %q); delete it first or import another native id", holder.Kind, holder.Name)
	}
	return nil
}

func samePins(a, b []store.Pin) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[store.Pin]int{}
	for _, p := range a {
		seen[p]++
	}
	for _, p := range b {
		if seen[p] == 0 {
			return false
		}
		seen[p]--
	}
	return true
}

// numberSpec decodes canonical spec bytes with exact numbers; an error is
// a spec the host did not write.
func numberSpec(b []byte) (map[string]any, error) {
	m, err := ijson.DecodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("canonical spec: %w", err)
	}
	return m, nil
}
