package lifecycle

import (
	"context"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Family is the semantics of a Form family beyond its schemas (the Edge
// rules of spec/host-api-v1alpha3.md §6.5); the engine calls it at fixed points of every
// mutation. Every method must be a pure function of its arguments and the
// store as the transaction sees it.
type Family interface {
	// Canonicalize rewrites a materialised spec at the entry of validate,
	// prepare, apply and import, before validation and digesting.
	Canonicalize(def *form.Definition, spec map[string]any) map[string]any
	// CheckSpec returns semantic findings decidable from the spec alone.
	CheckSpec(def *form.Definition, spec map[string]any) []form.Diagnostic
	// CheckCommit refuses a mutation that breaks a cross-resource rule,
	// with a *wire.Error; res is the resource as it would be stored.
	CheckCommit(tx store.Tx, def *form.Definition, res *store.Resource, creating bool) error
	// Record writes family records that res's own rendering reads (the
	// v1beta1 migration ledger's append, spec/lane-v1beta1.md §6.7 rule
	// 2): called after CheckCommit accepted and before res is rendered,
	// only for a mutation that is written now (never for the check of a
	// 202 accept; the operation's commit calls it then).
	Record(tx store.Tx, def *form.Definition, res *store.Resource) error
	// Persist writes family records of an accepted mutation (claims) after
	// res is stored.
	Persist(tx store.Tx, def *form.Definition, res *store.Resource) error
	// CheckDelete refuses deleting res while family dependents live.
	CheckDelete(tx store.Tx, def *form.Definition, res *store.Resource) error
	// Render returns family conditions and declared outputs of res.
	Render(tx store.Tx, def *form.Definition, res *store.Resource) (conds []wire.Condition, outputs map[string]any, err error)
	// Affected lists resources whose rendering may change when res changes
	// or is deleted (same tenant and space).
	Affected(tx store.Tx, res *store.Resource) ([]store.Key, error)
}

// Preloader is implemented by a Family with slow, read-only work a
// mutation's checks need (the Edge family's engine load check, repo
// decision 0052): the engine calls Preload (Engine.Preload) for an apply or import before the
// mutation's write transaction, in a read transaction, so CheckCommit then
// finds the result ready and the store's writer is not held for it. It
// decides nothing: CheckCommit still checks everything in the write
// transaction, and Preload reports no error.
type Preloader interface {
	// Preloads reports whether mutations of def have work for Preload;
	// it must be cheap (the host asks on every apply and import).
	Preloads(def *form.Definition) bool
	Preload(ctx context.Context, tx store.Tx, def *form.Definition, key store.Key, spec map[string]any)
}

// NoFamily adds no semantics: a generic host.
type NoFamily struct{}

// Canonicalize returns spec unchanged.
func (NoFamily) Canonicalize(_ *form.Definition, spec map[string]any) map[string]any { return spec }

// CheckSpec finds nothing.
func (NoFamily) CheckSpec(*form.Definition, map[string]any) []form.Diagnostic { return nil }

// CheckCommit accepts.
func (NoFamily) CheckCommit(store.Tx, *form.Definition, *store.Resource, bool) error { return nil }

// Record writes nothing.
func (NoFamily) Record(store.Tx, *form.Definition, *store.Resource) error { return nil }

// Persist writes nothing.
func (NoFamily) Persist(store.Tx, *form.Definition, *store.Resource) error { return nil }

// CheckDelete accepts.
func (NoFamily) CheckDelete(store.Tx, *form.Definition, *store.Resource) error { return nil }

// Render adds nothing.
func (NoFamily) Render(store.Tx, *form.Definition, *store.Resource) ([]wire.Condition, map[string]any, error) {
	return nil, nil, nil
}

// Affected lists nothing.
func (NoFamily) Affected(store.Tx, *store.Resource) ([]store.Key, error) { return nil, nil }
