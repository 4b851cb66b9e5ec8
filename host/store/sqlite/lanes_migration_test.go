package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// The rows an older binary wrote before migration 00009 (lanes): one
// idempotency record, one unfinished operation, one upload.
const preLaneRows = `
INSERT INTO idempotency (tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at)
	VALUES ('acme', 'alice', 'prod', 'k-old', 'f', 202, '', X'7B7D', '', 'op_old', 1);
INSERT INTO operations (id, tenant, principal, action, done, request, document, target_uid, target_tenant, target_space, target_api_version, target_kind, target_name, not_before, created_at, updated_at)
	VALUES ('op_old', 'acme', 'alice', 'apply', 0, X'7B7D', X'7B7D', '', 'acme', 'prod', 'forms.example.com/v1alpha1', 'EdgeKVNamespace', 'kv', 0, 1, 1);
INSERT INTO uploads (id, tenant, principal, manifest, manifest_digest, created_at)
	VALUES ('up_old', 'acme', 'alice', X'7B7D', 'sha256:0000000000000000000000000000000000000000000000000000000000000000', 1);`

// TestLanesMigration: migration 00009 gives every row written before it
// lane v1alpha3 (spec/lane-v1beta1.md §2.5, repo decision 0053), after it
// the same key holds one record per lane, and its Down keeps the lane
// v1alpha3 records and drops the others.
func TestLanesMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, p := fileAt(t, path, 8)
	if _, err := db.Exec(preLaneRows); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const beta = "forms.takoform.com/v1beta1"
	err = s.Update(ctx, func(tx store.Tx) error {
		rec, err := tx.Idempotency(store.LaneBeforeLanes, "acme", "alice", "prod", "k-old")
		if err != nil || rec.Lane != store.LaneBeforeLanes || rec.BoundOperation != "op_old" {
			t.Errorf("the older record under lane v1alpha3: %+v, %v", rec, err)
		}
		if _, err := tx.Idempotency(beta, "acme", "alice", "prod", "k-old"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the older record under lane v1beta1: %v", err)
		}
		if op, err := tx.Operation("op_old"); err != nil || op.Lane != store.LaneBeforeLanes {
			t.Errorf("the older operation: %+v, %v", op, err)
		}
		if up, err := tx.Upload("up_old"); err != nil || up.Lane != store.LaneBeforeLanes {
			t.Errorf("the older upload: %+v, %v", up, err)
		}
		rec.Lane = beta
		return tx.ClaimIdempotency(rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 8); err != nil {
		t.Fatalf("Down from 9 to 8: %v", err)
	}
	var records, laneCols int
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM idempotency WHERE key = 'k-old'),
		(SELECT COUNT(*) FROM pragma_table_info('operations') WHERE name = 'lane') + (SELECT COUNT(*) FROM pragma_table_info('uploads') WHERE name = 'lane') + (SELECT COUNT(*) FROM pragma_table_info('idempotency') WHERE name = 'lane')`).Scan(&records, &laneCols); err != nil {
		t.Fatal(err)
	}
	if records != 1 || laneCols != 0 {
		t.Fatalf("after Down: %d records of the key, %d lane columns; want 1 (lane v1alpha3's) and 0", records, laneCols)
	}
	var ops int
	if err := db.QueryRow(`SELECT COUNT(*) FROM operations WHERE id = 'op_old'`).Scan(&ops); err != nil || ops != 1 {
		t.Fatalf("after Down the operation is %d rows, %v", ops, err)
	}
}
