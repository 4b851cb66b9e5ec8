// Package edgehost is the host side of the Edge family
// (edge.forms.takoform.com/v1alpha1, and its v1beta1 line
// edge.forms.takoform.com/v1beta1): it enforces the worker aggregate,
// attachment gates, bindings, cron, hostnames, endpoints and handler
// exports (spec/host-api-v1alpha3.md §5.2, §6.4, §6.5, §7.3) by calling the pure rules of
// forms/edge, and renders ModuleWorker readiness and endpoint outputs;
// on the v1beta1 group also the artifact-backed revisions, the static
// assets of a WorkerVersion and the SQLite migration ledger
// (spec/lane-v1beta1.md §3.6, §5.2, §6.4–§6.7; v1beta1.go, ledger.go).
// It implements host.Family for any definition version of either group;
// the rules of one group never look at resources of the other (every
// relation names its own group, spec/lane-v1beta1.md §6.3).
package edgehost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// Group is the Edge family's Form group (forms/edge.Group).
const Group = edge.Group

// HostnameGroups are the Edge groups whose WorkerCustomDomain claims its
// canonical hostname. The claim is one per tenant across all of them: DNS
// has one answer per name whichever family asked (spec/lane-v1beta1.md
// §2.5 rule 7).
var HostnameGroups = map[string]bool{Group: true, GroupV1beta1: true}

// claimsHostname says def is a WorkerCustomDomain of a HostnameGroups
// group.
func claimsHostname(def *form.Definition) bool {
	r := def.Ref()
	return r.Kind == WorkerCustomDomain && HostnameGroups[r.APIVersion]
}

// Edge kinds.
const (
	ModuleWorker       = "ModuleWorker"
	WorkerBundle       = "WorkerBundle"
	WorkerVersion      = "WorkerVersion"
	WorkerDeployment   = "WorkerDeployment"
	WorkerCustomDomain = "WorkerCustomDomain"
	WorkerEndpoint     = "WorkerEndpoint"
	WorkerCronTrigger  = "WorkerCronTrigger"
	QueueConsumer      = "QueueConsumer"
)

// Family enforces the Edge rules.
type Family struct {
	// EndpointDomain is the DNS suffix host-assigned endpoint hostnames
	// end in (default "workers.takoform.localhost").
	EndpointDomain string
	// Limits are the artifact limits bundles are held to.
	Artifacts artifact.Limits
	// LoadCheck, when set, is the data plane's engine load check: it
	// decides a WorkerVersion's exported handlers and load refusals at
	// apply, import and 202 commit (spec/runtime-v1.md §1.3, §1.4). Nil, or
	// an engine that could not decide, leaves the static check
	// (artifact.ModuleSyntax, artifact.ExportedHandlers) to decide.
	LoadCheck artifact.LoadCheck
	// Migrate, when set, is the data plane's migration executor: the
	// commit of a SQLiteMigrationApplication runs the set's unapplied
	// files on the database's own file before the store ledger follows
	// (migrate.go, spec/runtime-v1.md §9.3). Nil keeps the control-plane
	// ledger only (spec/lane-v1beta1.md §6.7 rule 2).
	Migrate Migrator
}

// DefaultArtifactLimits are the host's default artifact limits: bundles
// of at most 10 MiB (support profile limits.maximumBundleBytes).
var DefaultArtifactLimits = artifact.Limits{MaximumBundleBytes: 10 << 20}

// New returns the Edge family semantics with default settings.
func New() *Family {
	return &Family{EndpointDomain: "workers.takoform.localhost", Artifacts: DefaultArtifactLimits}
}

// kindOf is def's kind when def is a Form of either Edge group, else "".
func kindOf(def *form.Definition) string {
	if !edge.IsGroup(def.Ref().APIVersion) {
		return ""
	}
	return def.Ref().Kind
}

// specOf decodes a stored canonical spec; an error is a store that no
// longer holds what the host wrote.
func specOf(res *store.Resource) (map[string]any, error) {
	m, err := ijson.DecodeObject(res.Spec)
	if err != nil {
		return nil, fmt.Errorf("stored spec of %s %q: %w", res.Kind, res.Name, err)
	}
	return m, nil
}

// specString is the string member of res's stored spec, "" when absent.
func specString(res *store.Resource, member string) (string, error) {
	spec, err := specOf(res)
	return ijson.As[string](spec[member]), err
}

// relName returns the target name of a relation member of spec.
func relName(spec map[string]any, field string) string {
	return ijson.As[string](ijson.As[map[string]any](spec[field])["name"])
}

// relTarget is relName over res's stored spec.
func relTarget(res *store.Resource, field string) (string, error) {
	spec, err := specOf(res)
	return relName(spec, field), err
}

// key is the address of kind name beside res: same tenant, space and
// Edge group (relations never cross groups).
func key(res *store.Resource, kind, name string) store.Key {
	return store.Key{Tenant: res.Tenant, Space: res.Space, APIVersion: res.APIVersion, Kind: kind, Name: name}
}

// lookup resolves a resource by key, nil when absent.
func lookup(tx store.Tx, k store.Key) (*store.Resource, error) {
	r, err := tx.Resource(k)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

// holders lists the live resources of kind, in target's group, that pin
// target.
func holders(tx store.Tx, target *store.Resource, kind string) ([]*store.Resource, error) {
	pins, err := tx.PinsTo(target.UID)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*store.Resource
	for _, p := range pins {
		if seen[p.SourceUID] {
			continue
		}
		seen[p.SourceUID] = true
		r, err := tx.ResourceByUID(p.SourceUID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.APIVersion == target.APIVersion && (kind == "" || r.Kind == kind) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Canonicalize canonicalises a custom domain's hostname at the entry
// point (spec/host-api-v1alpha3.md §5.6); an invalid hostname is left for CheckSpec to refuse.
func (f *Family) Canonicalize(def *form.Definition, spec map[string]any) map[string]any {
	if claimsHostname(def) {
		if h, ok := spec["hostname"].(string); ok {
			if c, err := edge.CanonicalHostname(h); err == nil {
				spec["hostname"] = c
			}
		}
	}
	return spec
}

// CheckSpec applies the per-field spec rules of forms/edge (edge.SpecRules
// less edge.AggregateRule ones, which checkAggregate refuses at apply;
// spec/conformance-probe.md §3).
func (f *Family) CheckSpec(def *form.Definition, spec map[string]any) []form.Diagnostic {
	if kindOf(def) == "" {
		return nil
	}
	var out []form.Diagnostic
	for _, re := range edge.SpecRules(def.Ref().Kind, spec) {
		if !edge.AggregateRule(re.Rule) {
			out = append(out, form.Diagnostic{Pointer: re.Pointer, Message: re.Message + " [" + re.Rule + "]"})
		}
	}
	return out
}

// checkAggregate refuses, at apply and import, a spec that breaks an
// aggregate rule of forms/edge: invalid_argument naming the rule and the
// pointer (spec/conformance-probe.md §3).
func checkAggregate(def *form.Definition, spec map[string]any) error {
	for _, re := range edge.SpecRules(def.Ref().Kind, spec) {
		if edge.AggregateRule(re.Rule) {
			return wire.Errorf(wire.InvalidArgument, "%s: %s [%s]", re.Pointer, re.Message, re.Rule).
				WithHostCode("aggregate_rule").WithDetail("pointer", re.Pointer).WithDetail("rule", re.Rule)
		}
	}
	return nil
}

// Render renders ModuleWorker readiness (spec/host-api-v1alpha3.md §5.2), WorkerEndpoint
// outputs (spec/host-api-v1alpha3.md §6.5) and SQLiteMigrationApplication
// readiness (spec/lane-v1beta1.md §5.2).
func (f *Family) Render(tx store.Tx, def *form.Definition, res *store.Resource) ([]wire.Condition, map[string]any, error) {
	switch kindOf(def) {
	case ModuleWorker:
		c, err := workerReadiness(tx, res)
		return []wire.Condition{c}, nil, err
	case WorkerEndpoint:
		h := f.EndpointHostname(res)
		return nil, map[string]any{"hostname": h, "url": "https://" + h + "/"}, nil
	}
	if v1beta1Kind(def) == SQLiteMigrationApplication {
		c, err := f.migrationReadiness(tx, res)
		return []wire.Condition{c}, nil, err
	}
	return nil, nil, nil
}

// EndpointHostname is the host-assigned address of a WorkerEndpoint
// (its status.outputs.hostname): "ep-" + 16 hex digits of sha256(tenant,
// NUL, UID) + "." + EndpointDomain, a pure function of its tenant and UID,
// so it is stable for the UID and distinct per endpoint (and so per
// worker: one endpoint per worker; spec/runtime-v1.md §9.1 (2)).
func (f *Family) EndpointHostname(res *store.Resource) string {
	sum := sha256.Sum256([]byte(res.Tenant + "\x00" + res.UID))
	return "ep-" + hex.EncodeToString(sum[:8]) + "." + f.EndpointDomain
}

// Affected: a deployment's change moves its worker's readiness; an
// application's commit moves its database's ledger, so the readiness of
// every other application of that database (spec/lane-v1beta1.md §5.2).
func (f *Family) Affected(tx store.Tx, res *store.Resource) ([]store.Key, error) {
	if res.APIVersion == GroupV1beta1 && res.Kind == SQLiteMigrationApplication {
		return applicationsOf(tx, res)
	}
	if edge.IsGroup(res.APIVersion) && res.Kind == WorkerDeployment {
		name, err := relTarget(res, "worker")
		if err != nil {
			return nil, err
		}
		return []store.Key{key(res, ModuleWorker, name)}, nil
	}
	return nil, nil
}

func asList(v any) []any { return ijson.As[[]any](v) }

func errorf(code wire.Code, hostCode, format string, args ...any) error {
	return wire.Errorf(code, format, args...).WithHostCode(hostCode)
}
