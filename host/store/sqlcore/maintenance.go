package sqlcore

import (
	"fmt"
	"time"
)

// The parts of store.Maintenance whose SQL and algorithm both stores
// share (spec/decisions/0009-retention-and-quotas.md): artifact
// references and the sweeps of terminal operations and abandoned
// uploads, each deciding and deleting in one statement that re-checks its
// condition. The schema version, the gauges, a tenant's usage and the
// artifact sweep stay in each store: their SQL differs (a boolean column,
// SUM's numeric type, usage shard rows, a sweep under each digest's
// advisory lock), and SQLite runs its counts unprepared on the caller's
// context, outside the prepared per-request set.

// ReplaceArtifactRefs replaces what holder references, each referenced
// digest written under its lock (ArtifactLock; repo decision 0011), so an
// artifact sweep never deletes a digest this transaction references.
func (c Core) ReplaceArtifactRefs(holder string, digests []string) error {
	if _, err := c.X.Exec(DropArtifactRefs, bind(holder)); err != nil {
		return fmt.Errorf("drop artifact references of %s: %w", holder, err)
	}
	for _, d := range digests {
		if _, err := c.X.ExecLocked(ArtifactLock(d), InsertArtifactRef, bind(holder, d)); err != nil {
			return fmt.Errorf("record artifact reference %s → %s: %w", holder, d, err)
		}
	}
	return nil
}

// SweepOperations deletes up to limit terminal operations updated before
// doneBefore and returns how many it deleted.
func (c Core) SweepOperations(doneBefore time.Time, limit int) (int, error) {
	return c.sweep("terminal operations", SweepOperations, doneBefore, limit)
}

// SweepUploads deletes up to limit upload sessions created before
// createdBefore; their references go with them (trigger uploads_delete).
func (c Core) SweepUploads(createdBefore time.Time, limit int) (int, error) {
	return c.sweep("abandoned uploads", SweepUploads, createdBefore, limit)
}

// sweep runs s, a sweep bound to (before in Unix nanoseconds, limit).
func (c Core) sweep(what string, s Stmt, before time.Time, limit int) (int, error) {
	n, err := c.X.Exec(s, bind(before.UnixNano(), limit))
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", what, err)
	}
	return int(n), nil
}
