package postgres

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
)

// gooseAt is a goose provider on the database at url, for moving its
// schema to a chosen version, after migrating it up to version.
func gooseAt(t *testing.T, url string, version int64) (*goose.Provider, *sql.DB) {
	t.Helper()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return p, db
}

func usageOf(t *testing.T, s *Store, tenant string) store.Usage {
	t.Helper()
	var u store.Usage
	if err := s.View(context.Background(), func(tx store.Tx) error {
		var err error
		u, err = tx.Usage(tenant)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return u
}

func createIn(t *testing.T, s *Store, tenant string, names ...string) {
	t.Helper()
	for _, n := range names {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			return tx.CreateResource(&store.Resource{Key: store.Key{Tenant: tenant, Space: "prod", APIVersion: "a/v1", Kind: "K", Name: n},
				UID: tenant + "-" + n, Spec: []byte(`{}`), Status: []byte(`{}`)})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A database written before migration 00003 (one usage row per tenant)
// opens, migrates, and counts on from its row; the migration's Down folds
// the shard rows back into one row per tenant.
func TestUsageShardsMigrateFromOneRow(t *testing.T) {
	url := pgtest.URL(t)
	p, db := gooseAt(t, url, 2)
	ctx := context.Background()
	if _, err := db.Exec(`INSERT INTO resources (uid, tenant, space, api_version, kind, name, form_api_version, form_kind,
		form_definition_version, form_schema_digest, package_digest, generation, revision, spec, spec_digest, status,
		native_id, created_at, updated_at) VALUES ('old-1', 'acme', 'prod', 'a/v1', 'K', 'old', '', '', '', '', '', 1, 1, '{}', '', '{}', '', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, url)
	if u := usageOf(t, s, "acme"); u.Resources != 1 {
		t.Fatalf("after migrating: acme holds %d resources, want the 1 counted before", u.Resources)
	}
	createIn(t, s, "acme", "a", "b", "c")
	createIn(t, s, "acme-other", "a")
	err := s.Update(ctx, func(tx store.Tx) error { return tx.DeleteResource("acme-a") })
	if err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, s, "acme"); u.Resources != 3 {
		t.Errorf("acme holds %d resources, want 3 (1 + 3 created - 1 deleted)", u.Resources)
	}
	if u := usageOf(t, s, "acme-other"); u.Resources != 1 {
		t.Errorf("acme-other holds %d resources, want 1 (a tenant whose name extends another's counts apart)", u.Resources)
	}
	s.Close()
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var rows int
	var n int64
	if err := db.QueryRow(`SELECT COUNT(*), SUM(resources) FROM tenant_usage WHERE tenant = 'acme'`).Scan(&rows, &n); err != nil {
		t.Fatal(err)
	}
	var shards int
	if err := db.QueryRow(`SELECT COUNT(*) FROM tenant_usage WHERE strpos(tenant, E'\x1f') > 0`).Scan(&shards); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || n != 3 || shards != 0 {
		t.Errorf("after Down: acme has %d rows holding %d resources and %d shard rows remain; want 1 row of 3, no shards", rows, n, shards)
	}
}

// Concurrent creates of one tenant do not wait for each other's commit on
// the usage counter: one transaction holds its create uncommitted while
// another creates in the same tenant and commits.
func TestUsageDoesNotSerializeATenant(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(ctx, func(tx store.Tx) error {
			err := tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "held"},
				UID: "u-held", Spec: []byte(`{}`), Status: []byte(`{}`)})
			close(held)
			<-release
			return err
		})
	}()
	<-held
	second := make(chan error, 1)
	go func() {
		second <- s.Update(ctx, func(tx store.Tx) error {
			return tx.CreateResource(&store.Resource{Key: store.Key{Tenant: "acme", Space: "prod", APIVersion: "a/v1", Kind: "K", Name: "free"},
				UID: "u-free", Spec: []byte(`{}`), Status: []byte(`{}`)})
		})
	}()
	// The second create commits while the first is still open; had it to
	// wait for the first (a shared usage row), a lock would show as not
	// waited for in pg_stat_activity.
	waiting := make(chan struct{})
	watch, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for watch.Err() == nil {
			var n int
			if err := s.pool.QueryRow(watch, `SELECT COUNT(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err == nil && n > 0 {
				close(waiting)
				return
			}
		}
	}()
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("second create: %v", err)
		}
	case <-waiting:
		close(release)
		t.Fatal("the second create of the tenant waits for the first's transaction")
	}
	stop()
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if u := usageOf(t, s, "acme"); u.Resources != 2 {
		t.Errorf("acme holds %d resources, want 2", u.Resources)
	}
}

// A database at schema version 3 (usage added through takoform_usage_add)
// opens and migrates to the inlined trigger functions of 00004, which
// count on from what 00003's counted — resources created and deleted,
// artifact bytes held and let go — and 00004's Down restores 00003's
// functions, which count on again.
func TestUsageInlineMigratesFromVersion3(t *testing.T) {
	url := pgtest.URL(t)
	p, db := gooseAt(t, url, 3)
	ctx := context.Background()
	insertResource := func(uid string) {
		t.Helper()
		if _, err := db.Exec(`INSERT INTO resources (uid, tenant, space, api_version, kind, name, form_api_version, form_kind,
			form_definition_version, form_schema_digest, package_digest, generation, revision, spec, spec_digest, status,
			native_id, created_at, updated_at) VALUES ($1, 'acme', 'prod', 'a/v1', 'K', $1, '', '', '', '', '', 1, 1, '{}', '', '{}', '', 0, 0)`, uid); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := db.Exec(sql); err != nil {
			t.Fatal(err)
		}
	}
	insertResource("v3-1")
	exec(`INSERT INTO blobs (digest, size, data, created_at) VALUES ('d1', 100, '', 0), ('d2', 20, '', 0)`)
	exec(`INSERT INTO holdings (tenant, digest) VALUES ('acme', 'd1')`)
	s := openTest(t, url)
	want := func(when string, resources, bytes int64) {
		t.Helper()
		if u := usageOf(t, s, "acme"); u.Resources != resources || u.ArtifactBytes != bytes {
			t.Errorf("%s: acme uses %d resources and %d artifact bytes, want %d and %d", when, u.Resources, u.ArtifactBytes, resources, bytes)
		}
	}
	want("after migrating", 1, 100)
	createIn(t, s, "acme", "a", "b")
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.DeleteResource("acme-a") }); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO holdings (tenant, digest) VALUES ('acme', 'd2')`)
	exec(`DELETE FROM holdings WHERE tenant = 'acme' AND digest = 'd1'`)
	want("at version 4", 2, 20)
	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	insertResource("v3-2")
	exec(`DELETE FROM holdings WHERE tenant = 'acme' AND digest = 'd2'`)
	// Read as schema version 3 sums it (this binary's Usage also reads
	// kv_bytes, which 00008 adds).
	var resources, bytes int64
	if err := db.QueryRow(`SELECT COALESCE(SUM(resources), 0), COALESCE(SUM(artifact_bytes), 0) FROM tenant_usage
		WHERE tenant = 'acme' OR (tenant > 'acme' || E'\x1f' AND tenant < 'acme' || E'\x20')`).Scan(&resources, &bytes); err != nil {
		t.Fatal(err)
	}
	if resources != 3 || bytes != 0 {
		t.Errorf("back at version 3: acme uses %d resources and %d artifact bytes, want 3 and 0", resources, bytes)
	}
}
