package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The store.Maintenance cases (spec/decisions/0009-retention-and-quotas.md):
// schema readiness, gauges, usage kept on every write, artifact
// references, and the conditional sweeps.
var maintenanceCases = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"SchemaVersionCurrent", testSchemaVersion},
	{"StatsGauges", testStats},
	{"UsageKeptOnWrites", testUsage},
	{"SweepOperations", testSweepOperations},
	{"SweepUploadsDropsTheirReferences", testSweepUploads},
	{"SweepArtifactsByReference", testSweepArtifacts},
}

func testSchemaVersion(t *testing.T, s store.Store) {
	view(t, s, func(tx store.Tx) error {
		applied, known, err := tx.SchemaVersion()
		wantNoErr(t, "SchemaVersion", err)
		if applied < 1 || applied != known {
			t.Errorf("SchemaVersion of an opened store = %d applied, %d known; want equal and ≥ 1", applied, known)
		}
		return nil
	})
}

func testStats(t *testing.T, s store.Store) {
	view(t, s, func(tx store.Tx) error {
		st, err := tx.Stats()
		wantNoErr(t, "Stats of an empty store", err)
		equal(t, "Stats of an empty store", st, store.Stats{})
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		done := op("op_done", key("acme", "prod", "a"), at(0), at(0))
		done.Done = true
		for _, o := range []*store.Operation{op("op_1", key("acme", "prod", "a"), at(0), at(0)), op("op_2", key("globex", "prod", "b"), at(0), at(0)), done} {
			wantNoErr(t, "PutOperation", tx.PutOperation(o))
		}
		wantNoErr(t, "PutIdempotency", tx.PutIdempotency(idem("alice", "prod", "k1", at(0))))
		wantNoErr(t, "PutBlob", tx.PutBlob(digestA, make([]byte, 1000)))
		return tx.PutBlob(digestB, make([]byte, 24))
	})
	view(t, s, func(tx store.Tx) error {
		st, err := tx.Stats()
		wantNoErr(t, "Stats", err)
		equal(t, "Stats", st, store.Stats{PendingOperations: 2, IdempotencyRecords: 1, ArtifactBytes: 1024})
		return nil
	})
}

func usageOf(t *testing.T, s store.Store, tenant string) store.Usage {
	t.Helper()
	var u store.Usage
	view(t, s, func(tx store.Tx) error {
		var err error
		u, err = tx.Usage(tenant)
		wantNoErr(t, "Usage of "+tenant, err)
		return nil
	})
	return u
}

func testUsage(t *testing.T, s store.Store) {
	equal(t, "usage of an unknown tenant", usageOf(t, s, "acme"), store.Usage{})
	create(t, s, kv("acme", "prod", "a", "uid-a"), kv("acme", "dev", "b", "uid-b"), kv("globex", "prod", "a", "uid-c"))
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "DeleteResource", tx.DeleteResource("uid-b"))
		wantNoErr(t, "PutBlob A", tx.PutBlob(digestA, make([]byte, 1000)))
		wantNoErr(t, "PutBlob B", tx.PutBlob(digestB, make([]byte, 10)))
		wantNoErr(t, "Hold A", tx.Hold("acme", digestA))
		wantNoErr(t, "Hold A again", tx.Hold("acme", digestA))
		wantNoErr(t, "Hold a manifest", tx.Hold("acme", digestM))
		return tx.Hold("globex", digestA)
	})
	equal(t, "acme usage", usageOf(t, s, "acme"), store.Usage{Resources: 1, ArtifactBytes: 1000})
	equal(t, "globex usage", usageOf(t, s, "globex"), store.Usage{Resources: 1, ArtifactBytes: 1000})
}

func testSweepOperations(t *testing.T, s store.Store) {
	k := key("acme", "prod", "a")
	finished := func(id string, updated time.Time) *store.Operation {
		o := op(id, k, at(0), at(0))
		o.Done, o.UpdatedAt = true, updated
		return o
	}
	update(t, s, func(tx store.Tx) error {
		for _, o := range []*store.Operation{finished("op_old1", at(time.Minute)), finished("op_old2", at(2*time.Minute)), finished("op_old3", at(3*time.Minute)),
			finished("op_new", at(time.Hour)), op("op_pending", k, at(0), at(0))} {
			wantNoErr(t, "PutOperation", tx.PutOperation(o))
		}
		return nil
	})
	sweep := func(before time.Time, limit int) (n int) {
		update(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepOperations(before, limit)
			wantNoErr(t, "SweepOperations", err)
			return nil
		})
		return n
	}
	equal(t, "first sweep, limit 2", sweep(at(30*time.Minute), 2), 2)
	equal(t, "second sweep", sweep(at(30*time.Minute), 2), 1)
	equal(t, "third sweep finds nothing", sweep(at(30*time.Minute), 2), 0)
	view(t, s, func(tx store.Tx) error {
		for id, want := range map[string]bool{"op_old1": false, "op_old2": false, "op_old3": false, "op_new": true, "op_pending": true} {
			_, err := tx.Operation(id)
			if (err == nil) != want {
				t.Errorf("after the sweeps, Operation(%s) = %v; want kept %v", id, err, want)
			}
		}
		return nil
	})
	equal(t, "a sweep far in the future keeps the unfinished", sweep(at(1000*time.Hour), 10), 1)
}

func testSweepUploads(t *testing.T, s store.Store) {
	doc := []byte(`{"kind":"WorkerBundle"}`)
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "PutBlob", tx.PutBlob(digestA, []byte("a")))
		wantNoErr(t, "Hold", tx.Hold("acme", digestA))
		for _, u := range []*store.Upload{
			{ID: "up_old", Tenant: "acme", Principal: "alice", Manifest: doc, ManifestDigest: digestM, CreatedAt: at(0)},
			{ID: "up_new", Tenant: "acme", Principal: "alice", Manifest: doc, ManifestDigest: digestM, CreatedAt: at(time.Hour)},
		} {
			wantNoErr(t, "PutUpload", tx.PutUpload(u))
		}
		return tx.ReplaceArtifactRefs(store.UploadHolder("up_old"), []string{digestA})
	})
	future := time.Now().Add(time.Hour)
	update(t, s, func(tx store.Tx) error {
		n, err := tx.SweepArtifacts(future, 10)
		wantNoErr(t, "SweepArtifacts", err)
		equal(t, "artifacts swept while an upload references them", n, 0)
		n, err = tx.SweepUploads(at(30*time.Minute), 10)
		wantNoErr(t, "SweepUploads", err)
		equal(t, "uploads swept", n, 1)
		return nil
	})
	update(t, s, func(tx store.Tx) error {
		_, err := tx.Upload("up_old")
		wantErr(t, "the swept upload", err, store.ErrNotFound)
		_, err = tx.Upload("up_new")
		wantNoErr(t, "the young upload", err)
		n, err := tx.SweepArtifacts(future, 10)
		wantNoErr(t, "SweepArtifacts", err)
		equal(t, "artifacts swept once the upload is gone", n, 1)
		return nil
	})
	equal(t, "acme usage after the sweep", usageOf(t, s, "acme"), store.Usage{})
}

func testSweepArtifacts(t *testing.T, s store.Store) {
	manifest := []byte(`{"kind":"WorkerBundle"}`)
	update(t, s, func(tx store.Tx) error {
		wantNoErr(t, "CreateResource", tx.CreateResource(kv("acme", "prod", "bundle", "uid-bundle")))
		wantNoErr(t, "PutBlob A", tx.PutBlob(digestA, bytes.Repeat([]byte("a"), 100)))
		wantNoErr(t, "PutBlob B", tx.PutBlob(digestB, bytes.Repeat([]byte("b"), 10)))
		wantNoErr(t, "PutManifest", tx.PutManifest(digestM, manifest))
		for _, d := range []string{digestA, digestB, digestM} {
			wantNoErr(t, "Hold", tx.Hold("acme", d))
		}
		wantNoErr(t, "refs of the manifest", tx.ReplaceArtifactRefs(store.ManifestHolder(digestM), []string{digestA, digestB}))
		wantNoErr(t, "refs replaced", tx.ReplaceArtifactRefs(store.ManifestHolder(digestM), []string{digestA}))
		return tx.ReplaceArtifactRefs(store.ResourceHolder("uid-bundle"), []string{digestM})
	})
	sweep := func(before time.Time) (n int) {
		update(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepArtifacts(before, 10)
			wantNoErr(t, "SweepArtifacts", err)
			return nil
		})
		return n
	}
	held := func(d string) (h bool) {
		view(t, s, func(tx store.Tx) error {
			var err error
			h, err = tx.Holds("acme", d)
			wantNoErr(t, "Holds", err)
			return nil
		})
		return h
	}
	equal(t, "sweep of artifacts younger than the cut-off", sweep(time.Now().Add(-time.Hour)), 0)
	equal(t, "sweep of old artifacts: the unreferenced blob B", sweep(time.Now().Add(time.Hour)), 1)
	equal(t, "B held after its sweep", held(digestB), false)
	equal(t, "A held while the manifest references it", held(digestA), true)
	equal(t, "usage without B", usageOf(t, s, "acme"), store.Usage{Resources: 1, ArtifactBytes: 100})
	update(t, s, func(tx store.Tx) error { return tx.DeleteResource("uid-bundle") })
	equal(t, "sweep once the resource is gone: the manifest, then its blob", sweep(time.Now().Add(time.Hour)), 2)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Manifest(digestM)
		wantErr(t, "the swept manifest", err, store.ErrNotFound)
		_, err = tx.BlobSize(digestA)
		wantErr(t, "the swept blob", err, store.ErrNotFound)
		return nil
	})
	equal(t, "usage after every sweep", usageOf(t, s, "acme"), store.Usage{})
	equal(t, "a second sweep finds nothing", sweep(time.Now().Add(time.Hour)), 0)
}
