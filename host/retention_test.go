package host_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

func env(t *testing.T, h *hosttest.Host) *conformance.Env {
	t.Helper()
	e, err := conformance.NewEnv(context.Background(), h.URL, conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}, false)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// uniqueModule is a worker module of about 64 KiB that no other call
// returns (its padding is random), so each upload stores a new blob.
func uniqueModule() []byte {
	pad := make([]byte, 32<<10)
	_, _ = rand.Read(pad)
	return append(conformance.Module("fetch"), []byte("// "+hex.EncodeToString(pad)+"\n")...)
}

// usedPages is the database's size in pages, free pages not counted.
func usedPages(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages, free int64
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil {
		t.Fatal(err)
	}
	return pages - free
}

// TestChurnLevelsOff: upload a fresh 64 KiB bundle, create a WorkerBundle
// over it and delete it, again and again, letting each round age past
// every retention and sweeping; the database stops growing with the
// count (without the sweeper each round would add its blob, 16+ pages).
func TestChurnLevelsOff(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	h := hosttest.Start(t, hosttest.Options{IdempotencyTTL: time.Hour, Now: now, Configure: func(c *host.Config) {
		c.Retention = host.Retention{Uploads: time.Hour, Artifacts: time.Hour, Interval: time.Hour}
	}})
	e := env(t, h)
	ctx := context.Background()
	round := func() {
		digest, err := e.UploadBundle(ctx, e.A1, uniqueModule())
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Create(ctx, e.A1, "WorkerBundle", e.Name("churn"), map[string]any{"manifestDigest": digest})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Delete(ctx, e.A1, b); err != nil {
			t.Fatal(err)
		}
		offset.Add(int64(2 * time.Hour))
		if _, err := h.Server.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		round()
	}
	warm := usedPages(t, h.Path)
	const more = 30
	for range more {
		round()
	}
	after := usedPages(t, h.Path)
	t.Logf("used pages: %d after 10 rounds, %d after %d more", warm, after, more)
	if grown := after - warm; grown > 16 { // less than one round's blob
		t.Fatalf("the database grew from %d to %d used pages over %d more rounds; it should level off", warm, after, more)
	}
}

// TestQuotas: a tenant at its resource quota is refused a create with
// policy_denied naming the limit, and is admitted again after a delete;
// a blob that would carry it over its artifact quota is refused likewise.
// Other tenants are not affected.
func TestQuotas(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{Configure: func(c *host.Config) {
		c.Quotas = host.Quotas{Resources: 2, ArtifactBytes: 100 << 10}
	}})
	e := env(t, h)
	ctx := context.Background()
	var made []*wire.Resource
	for range 2 {
		r, err := e.Create(ctx, e.A1, "EdgeKVNamespace", e.Name("q"), map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, r)
	}
	_, err := e.Create(ctx, e.A2, "EdgeKVNamespace", e.Name("q"), map[string]any{})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.PolicyDenied || we.HostCode != "quota_resources" || !strings.Contains(we.Message, "--quota-resources 2") {
		t.Fatalf("third resource of tenant-a: %v", err)
	}
	if _, err := e.Create(ctx, e.B, "EdgeKVNamespace", e.Name("q"), map[string]any{}); err != nil {
		t.Fatalf("tenant-b under its own quota: %v", err)
	}
	if err := e.Delete(ctx, e.A1, made[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, e.A1, "EdgeKVNamespace", e.Name("q"), map[string]any{}); err != nil {
		t.Fatalf("after a delete: %v", err)
	}

	if _, err := e.UploadBundle(ctx, e.A1, uniqueModule()); err != nil {
		t.Fatalf("first 64 KiB bundle under a 100 KiB quota: %v", err)
	}
	_, err = e.UploadBundle(ctx, e.A1, uniqueModule())
	if !errors.As(err, &we) || we.Code != wire.PolicyDenied || we.HostCode != "quota_artifact_bytes" || !strings.Contains(we.Message, "--quota-artifact-bytes 102400") {
		t.Fatalf("second bundle over the artifact quota: %v", err)
	}
	if _, err := e.UploadBundle(ctx, e.B, uniqueModule()); err != nil {
		t.Fatalf("tenant-b's bundle: %v", err)
	}
}

// TestTwoSweepersShareOneDatabase: two hosts on one database file sweep
// at once; neither fails and together they delete each row exactly once.
func TestTwoSweepersShareOneDatabase(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	o := hosttest.Options{IdempotencyTTL: time.Hour, Now: now, Configure: func(c *host.Config) {
		c.Retention = host.Retention{Uploads: time.Hour, Artifacts: time.Hour, Interval: time.Hour, Batch: 2}
	}}
	h1 := hosttest.Start(t, o)
	o.Path = h1.Path
	h2 := hosttest.Start(t, o)
	e := env(t, h1)
	ctx := context.Background()
	const bundles = 6
	for range bundles {
		if _, err := e.UploadBundle(ctx, e.A1, uniqueModule()); err != nil {
			t.Fatal(err)
		}
	}
	offset.Add(int64(2 * time.Hour))
	got := make(chan host.Swept, 2)
	errs := make(chan error, 2)
	for _, h := range []*hosttest.Host{h1, h2} {
		go func() {
			n, err := h.Server.Sweep(ctx)
			got <- n
			errs <- err
		}()
	}
	var total host.Swept
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent sweep: %v", err)
		}
		n := <-got
		total.Uploads += n.Uploads
		total.Artifacts += n.Artifacts
	}
	if total.Uploads != bundles || total.Artifacts != 2*bundles { // each bundle: one manifest, one blob
		t.Fatalf("two sweepers deleted %+v in all, want %d uploads and %d artifacts", total, bundles, 2*bundles)
	}
}
