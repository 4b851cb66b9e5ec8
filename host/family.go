package host

import (
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/edgehost"
	"github.com/takoform/takoform/host/lifecycle"
)

// Family is the semantics of a Form family beyond its schemas (the Edge
// rules of spec/host-api-v1alpha3.md §6.5), called by the lifecycle
// engine at fixed points of every mutation: lifecycle.Family.
type Family = lifecycle.Family

// Preloader is a Family's slow, read-only work run before a mutation's
// write transaction (repo decision 0052): lifecycle.Preloader.
type Preloader = lifecycle.Preloader

// NoFamily adds no semantics: a generic host (lifecycle.NoFamily).
type NoFamily = lifecycle.NoFamily

// Quotas are per-tenant limits (spec/decisions/0009-retention-and-quotas.md),
// enforced by the lifecycle engine: lifecycle.Quotas.
type Quotas = lifecycle.Quotas

// DefaultFamily returns the semantics a host enforces: the Edge family's
// rules (they apply only to Forms of the Edge group, so other families
// installed with --forms stay generic).
func DefaultFamily(*form.Catalog) Family { return edgehost.New() }
