package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// onStores runs fn against a host on a SQLite file and on PostgreSQL (when
// TAKOFORM_TEST_POSTGRES names a server; otherwise that subtest skips,
// saying so).
func onStores(t *testing.T, fn func(t *testing.T, o hosttest.Options)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, hosttest.Options{}) })
	t.Run("postgres", func(t *testing.T) { fn(t, hosttest.Options{Data: pgtest.URL(t)}) })
}

// The static-asset-spa-paths check's bundle: one file index.html, text/html,
// the 16 bytes "<!doctype html>\n" (spec/lane-v1beta1.md §14).
var spaIndex = file{"index.html", "text/html", []byte("<!doctype html>\n")}

const spaManifestDigest = "sha256:cbe2b727409837573d4b24ee47f5796e187945e383609098b931f1b6d072c856"

// Artifact-backed revisions of the v1beta1 family resolve their manifest
// in the caller's tenant before anything is written
// (spec/lane-v1beta1.md §3.6): not held → artifact_missing (404); another
// kind, or a manifest breaking a v1beta1 rule → artifact_invalid (400);
// each refusal leaves the name free.
func TestV1beta1ArtifactBackedRevisions(t *testing.T) {
	onStores(t, func(t *testing.T, o hosttest.Options) {
		b := startBeta(t, o)
		assets := b.upload(artifact.KindStaticAssetBundle, spaIndex, file{"app.js", "text/javascript", []byte("x")})
		migrations := b.upload(artifact.KindMigrationBundle, file{"0001.sql", "application/sql", []byte("CREATE TABLE t (id INTEGER);\n")})
		worker := b.workerBundle("fetch")
		// A MigrationBundle of a text/plain file commits on lane v1alpha3,
		// which keeps its rules (spec/lane-v1beta1.md §0.1), but no v1beta1
		// SQLiteMigrationSet may name it.
		plain := b.upload(artifact.KindMigrationBundle, file{"0001.sql", "text/plain", []byte("CREATE TABLE p (id INTEGER);\n")})
		unheld := "sha256:" + strings.Repeat("ab", 32)

		for _, c := range []struct {
			kind, digest string
			code         wire.Code
			hostCode     string
		}{
			{"StaticAssetBundle", unheld, wire.ArtifactMissing, "manifest_missing"},
			{"SQLiteMigrationSet", unheld, wire.ArtifactMissing, "manifest_missing"},
			{"WorkerBundle", unheld, wire.ArtifactMissing, "manifest_missing"},
			{"StaticAssetBundle", migrations, wire.ArtifactInvalid, "manifest_kind"},
			{"StaticAssetBundle", worker, wire.ArtifactInvalid, "manifest_kind"},
			{"SQLiteMigrationSet", assets, wire.ArtifactInvalid, "manifest_kind"},
			{"WorkerBundle", assets, wire.ArtifactInvalid, "manifest_kind"},
			{"SQLiteMigrationSet", plain, wire.ArtifactInvalid, "manifest_invalid"},
		} {
			_, err := b.create(c.kind, "refused", map[string]any{"manifestDigest": c.digest})
			if we := wantCode(t, c.kind+" naming "+c.digest, err, c.code); we != nil && we.HostCode != c.hostCode {
				t.Errorf("%s naming %s: hostCode %q, want %q (%s)", c.kind, c.digest, we.HostCode, c.hostCode, we.Message)
			}
			if _, err := b.c.Read(context.Background(), b.addr(c.kind, "refused")); err == nil {
				t.Errorf("%s naming %s was refused but created", c.kind, c.digest)
			}
		}
		_, err := b.create("SQLiteMigrationSet", "plain", map[string]any{"manifestDigest": plain})
		if we := wantCode(t, "a set of a text/plain migration", err, wire.ArtifactInvalid); we != nil && !strings.Contains(we.Message, "application/sql") {
			t.Errorf("the refusal does not name application/sql: %s", we.Message)
		}

		b.mustCreate("StaticAssetBundle", "assets", map[string]any{"manifestDigest": assets})
		b.mustCreate("SQLiteMigrationSet", "migrations", map[string]any{"manifestDigest": migrations})
		b.mustCreate("WorkerBundle", "worker", map[string]any{"manifestDigest": worker})

		// A digest is not a capability: tenant B does not hold these.
		other := b.as(hosttest.TokenB)
		for kind, d := range map[string]string{"StaticAssetBundle": assets, "SQLiteMigrationSet": migrations} {
			_, err := other.create(kind, "stolen", map[string]any{"manifestDigest": d})
			wantCode(t, "tenant B's "+kind+" naming tenant A's manifest", err, wire.ArtifactMissing)
		}
	})
}

// The FormSupport profiles of the v1beta1 artifact-backed Forms carry
// limits.maximumBundleBytes 10485760 and limits.maximumBundleFiles 4096
// (WorkerBundle) or 16384 (StaticAssetBundle, SQLiteMigrationSet);
// WorkerVersion keeps maximumBundleBytes alone (spec/lane-v1beta1.md
// §8.1). The built-in v1alpha1 family's profiles are as they were
// (spec/host-api-v1alpha3.md §8.1).
func TestV1beta1SupportLimits(t *testing.T) {
	b := startBeta(t, hosttest.Options{})
	want := map[string]map[string]int64{
		"WorkerBundle":       {"maximumBundleBytes": 10485760, "maximumBundleFiles": 4096},
		"StaticAssetBundle":  {"maximumBundleBytes": 10485760, "maximumBundleFiles": 16384},
		"SQLiteMigrationSet": {"maximumBundleBytes": 10485760, "maximumBundleFiles": 16384},
		"WorkerVersion":      {"maximumBundleBytes": 10485760},
	}
	profiles, err := b.c.SupportForms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range profiles.Profiles {
		w, ok := want[p.FormRef.Kind]
		if !ok {
			if len(p.Limits) != 0 {
				t.Errorf("%s advertises limits %v", p.FormRef.Kind, p.Limits)
			}
			continue
		}
		seen++
		if len(p.Limits) != len(w) {
			t.Errorf("%s limits %v, want %v", p.FormRef.Kind, p.Limits, w)
		}
		for k, v := range w {
			if p.Limits[k] != v {
				t.Errorf("%s limits.%s = %d, want %d", p.FormRef.Kind, k, p.Limits[k], v)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d profiles with limits were listed", seen, len(want))
	}

	old := hosttest.Start(t, hosttest.Options{})
	c, err := client.New(context.Background(), old.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	if profiles, err = c.SupportForms(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles.Profiles {
		switch p.FormRef.Kind {
		case "WorkerBundle", "WorkerVersion":
			if len(p.Limits) != 1 || p.Limits["maximumBundleBytes"] != 10485760 {
				t.Errorf("v1alpha1 %s limits %v, want maximumBundleBytes alone", p.FormRef.Kind, p.Limits)
			}
		default:
			if len(p.Limits) != 0 {
				t.Errorf("v1alpha1 %s advertises limits %v", p.FormRef.Kind, p.Limits)
			}
		}
	}
}

// Through HTTP: a MigrationBundle of a text/plain file is committed on
// lane v1alpha3 as before, and refused artifact_invalid on lane v1beta1
// (spec/lane-v1beta1.md §3.6). The second half needs the v1beta1 lane's
// routes and skips, saying so, on a host that does not serve them yet.
func TestV1beta1UploadRefusesNonSQLMigrations(t *testing.T) {
	b := startBeta(t, hosttest.Options{})
	m, blobs := filesManifest(artifact.KindMigrationBundle, file{"0001.sql", "text/plain", []byte("CREATE TABLE p (id INTEGER);\n")})
	if _, err := b.c.UploadArtifact(context.Background(), m, blobs); err != nil {
		t.Fatalf("lane v1alpha3 refuses what it accepted before: %v", err)
	}
	body, err := json.Marshal(map[string]any{"manifest": m})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, b.h.URL+"/apis/forms.takoform.com/v1beta1/artifacts/uploads", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "v1beta1-upload-refusal")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env wire.ErrorEnvelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("HTTP %d: %v", resp.StatusCode, err)
	}
	if resp.StatusCode == 404 && env.Error.HostCode == "unknown_route" {
		t.Skip("this host serves no lane v1beta1 routes yet; the upload rule is checked by TestUploadLimitsFollowTheLane until they land")
	}
	if resp.StatusCode != 400 || env.Error.Code != wire.ArtifactInvalid {
		t.Errorf("a text/plain migration on lane v1beta1: HTTP %d %s, want 400 artifact_invalid", resp.StatusCode, env.Error.Code)
	}
}

// A StaticAssetBundle's and a SQLiteMigrationSet's manifests stay while
// the revisions live, as a WorkerBundle's do (spec/host-api-v1alpha3.md
// §3.6 "committed manifests and blobs stay readable while any resource
// references them"): a retention sweep removes an unnamed manifest and
// keeps theirs.
func TestV1beta1ManifestsKeptWhileReferenced(t *testing.T) {
	b := startBeta(t, hosttest.Options{})
	assets := b.upload(artifact.KindStaticAssetBundle, spaIndex)
	migrations := b.upload(artifact.KindMigrationBundle, sql0001)
	unnamed := b.upload(artifact.KindStaticAssetBundle, file{"other.html", "text/html", []byte("<p>other</p>\n")})
	b.mustCreate("StaticAssetBundle", "assets", map[string]any{"manifestDigest": assets})
	b.mustCreate("SQLiteMigrationSet", "migrations", map[string]any{"manifestDigest": migrations})
	if err := b.h.Store.Update(context.Background(), func(tx store.Tx) error {
		_, err := tx.SweepArtifacts(time.Now().Add(time.Hour), 100)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{assets, migrations} {
		if _, err := b.c.Manifest(context.Background(), d); err != nil {
			t.Errorf("the sweep removed manifest %s, which a revision names: %v", d, err)
		}
	}
	_, err := b.c.Manifest(context.Background(), unnamed)
	wantCode(t, "the unnamed manifest after the sweep", err, wire.ArtifactMissing)
}
