// Package conformance holds black-box Host API v1alpha3 checks, one per
// required check ID of spec/host-api-v1alpha3.md Appendix A. Every check drives a host
// over HTTP — through package client where the request is well-formed, and
// through raw HTTP where a check must send what a client never would —
// with three credentials: two principals of one tenant and one principal
// of another. `takoform conformance run` runs them against any host;
// `make test` runs them against ours.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Check is one conformance check.
type Check struct {
	ID      string // the Appendix A check ID
	Group   string // discovery, lifecycle, relations, operations, import, artifacts, edge, tenancy
	Summary string // one line: what the check protects
	Run     func(ctx context.Context, e *Env) error
}

// ErrSkip marks a check that could not run against this host (e.g. it
// needs the conformance probe); wrap it with the reason.
var ErrSkip = errors.New("skipped")

// skipf returns a skip with a reason.
func skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSkip, fmt.Sprintf(format, args...))
}

var registry = map[string]Check{}

// register adds checks; an ID registered twice is a programming error.
func register(cs ...Check) {
	for _, c := range cs {
		if _, dup := registry[c.ID]; dup {
			panic("conformance: check " + c.ID + " registered twice")
		}
		registry[c.ID] = c
	}
}

// Checks lists every registered check sorted by group, then ID.
func Checks() []Check {
	out := make([]Check, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Result is one check's outcome.
type Result struct {
	ID, Group string
	Err       error // nil: passed
	Skipped   bool
	Duration  time.Duration
}

// RunCheck runs one check with a deadline.
func RunCheck(ctx context.Context, e *Env, c Check) Result {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	err := c.Run(ctx, e)
	return Result{ID: c.ID, Group: c.Group, Err: err, Skipped: errors.Is(err, ErrSkip), Duration: time.Since(start)}
}

// RequiredIDs is spec/host-api-v1alpha3.md Appendix A: the 114 required check IDs.
var RequiredIDs = []string{
	"discovery-exact", "unauthenticated-request-refused", "forms-exact-availability", "form-definition-exact",
	"exact-form-ref-fails-closed-on-unknown-definition", "two-definition-versions-answer-independently",
	"resource-answers-only-under-its-recorded-form-ref", "same-kind-two-groups", "namespaced-group-travels-as-two-path-segments",
	"support-profiles-present", "error-envelope-taxonomy", "space-id-grammar-enforced", "condition-reason-closed",
	"validate-accepts-canonical", "validate-rejects-negative-fixtures", "prepare-binds-exact-spec", "prepare-substitution-rejected",
	"prepare-requires-update-fence", "stale-prepare-rejected", "apply-create-uid-minted", "apply-headers-required",
	"apply-idempotency-replay", "replay-record-retires-with-its-incarnation", "create-conflict-when-exists",
	"update-generation-fence", "stale-generation-rejected", "revision-etag-exact", "observe-fence-exact",
	"status-change-bumps-revision-not-generation", "spec-change-bumps-generation", "delete-generation-fence",
	"delete-revision-fence", "stale-revision-rejected", "delete-then-recreate-uid-changes", "expected-uid-mismatch-rejected",
	"package-digest-not-identity", "revision-role-update-rejected", "no-update-spec-change-rejected", "cross-space-isolation",
	"cross-principal-idempotency-isolation", "concurrent-unrelated-mutation", "form-declared-outputs-are-exact",
	"binding-target-missing-404-before-mutation", "dependency-in-use-on-bound-target-delete", "relation-target-missing-rejected",
	"relation-target-deletion-blocked", "relation-incarnation-change-detected", "relation-reapply-repins", "binding-contract-verified",
	"relation-target-form-ref-verified", "relation-target-interface-verified", "relation-pin-records-target-form-ref",
	"async-operation-flow", "operation-replay-terminal", "operation-resumable-after-settlement", "operation-cancel",
	"async-commit-revalidates", "async-commit-binds-the-accepted-identity", "operation-bound-to-its-creating-principal",
	"import-adopts-native-resource", "import-validates-like-apply", "import-claims-its-native-identity", "import-records-its-native-identity",
	"artifact-upload-missing-blob", "artifact-digest-mismatch", "artifact-commit-idempotent", "artifact-then-bundle-apply",
	"artifact-manifest-reject-list", "artifact-commit-binds-declared-size", "artifact-manifest-kind-exclusive",
	"bundle-main-module-is-loadable", "artifact-retention-while-referenced", "upload-session-bound-to-its-creating-principal",
	"artifact-digest-is-not-a-capability", "manifest-reference-is-not-a-capability",
	"deployment-weight-sum-enforced", "deployment-single-active-per-worker", "deployment-version-ownership",
	"deployment-version-duplicate-rejected", "attachment-requires-active-deployment", "handler-gated-attachments",
	"binding-name-collision-rejected", "deployment-change-preserves-dependents", "deployment-delete-blocked-by-dependent",
	"deployment-delete-blocked-by-inbound-binding", "dependent-revision-advances-with-rendering", "delete-fence-survives-derived-rendering",
	"module-worker-runtime-contract-advertised", "undeclared-runtime-handler-rejected", "declared-handler-not-exported-rejected",
	"edge-interface-contracts-advertised", "cron-grammar-enforced", "queue-single-consumer-enforced",
	"custom-domain-hostname-canonicalized", "custom-domain-hostname-claim-unique", "custom-domain-hostname-claim-stops-at-the-tenant",
	"dead-letter-cycle-rejected", "attachment-claim-decided-on-import", "attachment-claim-revalidated-at-commit",
	"custom-domain-u-label-refused", "worker-endpoint-address-is-host-assigned", "worker-endpoint-single-per-worker",
	"worker-endpoint-follows-the-active-deployment", "worker-endpoint-address-is-stable-for-its-uid",
	"resource-address-is-tenant-scoped", "resource-read-is-tenant-isolated", "resource-observe-is-tenant-isolated",
	"resource-update-is-tenant-isolated", "resource-import-is-tenant-isolated", "resource-delete-is-tenant-isolated",
	"relation-resolution-is-tenant-scoped", "prepare-is-tenant-scoped", "idempotency-is-tenant-scoped", "each-tenant-mutates-its-own-plane",
}
