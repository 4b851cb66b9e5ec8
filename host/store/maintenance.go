package store

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Maintenance is the part of Tx the host's operator layer uses: readiness,
// the gauges /metrics reports, per-tenant quota usage, artifact
// references and the retention sweeps (spec/decisions/0009-retention-and-quotas.md).
//
// Every sweep deletes at most limit rows, and decides and deletes in one
// conditional statement: a row is deleted only if, when the delete runs,
// it still matches (terminal and old, or unreferenced and old). Two hosts
// sweeping one database at once therefore never both delete a row, and a
// sweep never deletes an artifact a concurrent transaction has just
// referenced (an implementation with concurrent writers must serialize a
// reference insert against the delete, e.g. by locking the artifact row).
type Maintenance interface {
	// SchemaVersion returns the newest schema migration applied to the
	// database and the newest this binary carries; the host is ready only
	// when they are equal.
	SchemaVersion() (applied, known int64, err error)
	// Stats returns the store-wide gauges of /metrics.
	Stats() (Stats, error)
	// Usage returns what tenant holds, kept current by every write
	// (CreateResource, DeleteResource, Hold, and the sweeps); a tenant that
	// holds nothing has the zero Usage, not ErrNotFound.
	Usage(tenant string) (Usage, error)

	// ReplaceArtifactRefs makes holder reference exactly digests (blob or
	// manifest digests; nil references nothing). Holders are named by
	// ResourceHolder, UploadHolder and ManifestHolder; deleting the
	// resource, upload or manifest drops its references.
	ReplaceArtifactRefs(holder string, digests []string) error

	// SweepOperations deletes terminal operations last updated before
	// doneBefore; unfinished ones are never deleted.
	SweepOperations(doneBefore time.Time, limit int) (int, error)
	// SweepUploads deletes upload sessions created before createdBefore.
	SweepUploads(createdBefore time.Time, limit int) (int, error)
	// SweepArtifacts deletes manifests, then blobs, stored (or last
	// stored again) before storedBefore that no holder references, with
	// every tenant's holding of them (Usage drops accordingly).
	SweepArtifacts(storedBefore time.Time, limit int) (int, error)
}

// Stats are store-wide gauges: unfinished operations, idempotency records
// and stored artifact (blob) bytes.
type Stats struct {
	PendingOperations  int64
	IdempotencyRecords int64
	ArtifactBytes      int64
}

// Usage is one tenant's quota usage: live resources, the bytes of the
// blobs it holds (each distinct blob counted once per tenant), the bytes
// of its edge.kv entries (KVEntry.Size, expired ones until swept) and of
// its stored edge.queue message bodies, and of its objects and uploaded
// parts.
type Usage struct {
	Resources     int64
	ArtifactBytes int64
	KVBytes       int64
	QueueBytes    int64
	ObjectBytes   int64
}

// Artifact reference holders (ReplaceArtifactRefs).
func ResourceHolder(uid string) string { return "resource:" + uid }

// UploadHolder names an upload session as a reference holder.
func UploadHolder(id string) string { return "upload:" + id }

// ManifestHolder names a committed manifest as the holder of its blobs.
func ManifestHolder(digest string) string { return "manifest:" + digest }

// CommitObserver receives the latency of each durable commit and how many
// Update calls it answered (the group-commit batch size). Hooks run on the
// committing goroutine and must be quick.
type CommitObserver interface {
	ObserveCommit(latency time.Duration, batch int)
}

// Observable is implemented by a Store that reports its commits; the host
// registers its metrics with it (spec/decisions/0010-operator-surface.md).
type Observable interface {
	ObserveCommits(o CommitObserver)
}

// NewestMigration is the version of the newest goose migration in the
// folder dir of fsys (the number prefix of its newest NNNNN_*.sql file):
// the schema version a binary knows (Maintenance.SchemaVersion).
func NewestMigration(fsys fs.FS, dir string) (int64, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return 0, err
	}
	var newest int64
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s has no version prefix: %w", e.Name(), err)
		}
		newest = max(newest, n)
	}
	return newest, nil
}
