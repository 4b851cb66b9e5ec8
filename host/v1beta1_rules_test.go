package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/takoform/takoform/artifact"
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
