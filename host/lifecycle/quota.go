package lifecycle

import (
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// Quotas are per-tenant limits (spec/decisions/0009-retention-and-quotas.md);
// 0 means unlimited (the default). A request that would exceed one is
// answered policy_denied naming the limit.
type Quotas struct {
	Resources     int64 // live resources per tenant (--quota-resources)
	ArtifactBytes int64 // bytes of distinct blobs a tenant holds (--quota-artifact-bytes)
}

// checkResourceQuota refuses creating one more resource in tenant.
func (e *Engine) checkResourceQuota(tx store.Tx, tenant string) error {
	limit := e.quotas.Resources
	if limit <= 0 {
		return nil
	}
	u, err := tx.Usage(tenant)
	if err != nil {
		return err
	}
	if u.Resources >= limit {
		return wire.Errorf(wire.PolicyDenied, "tenant %q holds %d resources, this host's limit per tenant (quota --quota-resources %d); delete resources or ask the host operator to raise the quota", tenant, u.Resources, limit).WithHostCode("quota_resources").WithDetail("limit", limit)
	}
	return nil
}

// CheckArtifactQuota refuses a tenant holding size more blob bytes.
func (e *Engine) CheckArtifactQuota(tx store.Tx, tenant string, size int64) error {
	limit := e.quotas.ArtifactBytes
	if limit <= 0 {
		return nil
	}
	u, err := tx.Usage(tenant)
	if err != nil {
		return err
	}
	if u.ArtifactBytes+size > limit {
		return wire.Errorf(wire.PolicyDenied, "this blob of %d bytes would bring tenant %q to %d artifact bytes, over this host's limit per tenant (quota --quota-artifact-bytes %d); remove unused bundles (unreferenced artifacts are deleted after their retention) or ask the host operator to raise the quota", size, tenant, u.ArtifactBytes+size, limit).WithHostCode("quota_artifact_bytes").WithDetail("limit", limit)
	}
	return nil
}
