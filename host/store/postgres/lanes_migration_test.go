package postgres

import (
	"errors"
	"testing"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// The rows an older binary wrote before migration 00012 (lanes): one
// idempotency record, one unfinished operation, one upload.
var preLaneRows = []string{
	`INSERT INTO idempotency (tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at)
	VALUES ('acme', 'alice', 'prod', 'k-old', 'f', 202, '', '\x7b7d', '', 'op_old', 1)`,
	`INSERT INTO operations (id, tenant, principal, action, done, request, document, target_uid, target_tenant, target_space, target_api_version, target_kind, target_name, not_before, created_at, updated_at)
	VALUES ('op_old', 'acme', 'alice', 'apply', 0, '\x7b7d', '\x7b7d', '', 'acme', 'prod', 'forms.example.com/v1alpha1', 'EdgeKVNamespace', 'kv', 0, 1, 1)`,
	`INSERT INTO uploads (id, tenant, principal, manifest, manifest_digest, created_at)
	VALUES ('up_old', 'acme', 'alice', '\x7b7d', 'sha256:0000000000000000000000000000000000000000000000000000000000000000', 1)`,
}

// TestLanesMigration: migration 00012 gives every row written before it
// lane v1alpha3 (spec/lane-v1beta1.md §2.5, repo decision 0053), after it
// the same key holds one record per lane, and its Down keeps the lane
// v1alpha3 records and drops the others.
func TestLanesMigration(t *testing.T) {
	url := pgtest.URL(t)
	p, db := gooseAt(t, url, 11)
	for _, q := range preLaneRows {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const beta = "forms.takoform.com/v1beta1"
	err = s.Update(t.Context(), func(tx store.Tx) error {
		rec, err := tx.Idempotency(store.LaneBeforeLanes, "acme", "alice", "prod", "k-old")
		if err != nil || rec.Lane != store.LaneBeforeLanes || rec.BoundOperation != "op_old" {
			t.Errorf("the older record under lane v1alpha3: %+v, %v", rec, err)
			return err
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
		other := *rec
		other.Lane = beta
		return tx.ClaimIdempotency(&other)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), 11); err != nil {
		t.Fatalf("Down from 12 to 11: %v", err)
	}
	var records, laneCols, ops int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM idempotency WHERE key = 'k-old'),
		(SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'lane' AND table_name IN ('operations', 'uploads', 'idempotency')),
		(SELECT count(*) FROM operations WHERE id = 'op_old')`).Scan(&records, &laneCols, &ops); err != nil {
		t.Fatal(err)
	}
	if records != 1 || laneCols != 0 || ops != 1 {
		t.Fatalf("after Down: %d records of the key, %d lane columns, %d operations; want 1 (lane v1alpha3's), 0 and 1", records, laneCols, ops)
	}
}
