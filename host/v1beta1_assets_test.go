package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// versionSpec is the version probe's spec of the static-asset-spa-paths
// check (worker module-worker-probe, bundle worker-bundle-probe, handlers
// fetch scheduled queue, CACHE → edge-kv-probe) plus assets, when given
// (spec/lane-v1beta1.md §14).
func versionSpec(assets map[string]any) map[string]any {
	spec := map[string]any{
		"worker":     rel("ModuleWorker", "module-worker-probe"),
		"bundle":     rel("WorkerBundle", "worker-bundle-probe"),
		"handlers":   []string{"fetch", "scheduled", "queue"},
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": rel("EdgeKVNamespace", "edge-kv-probe")}},
	}
	if assets != nil {
		spec["assets"] = assets
	}
	return spec
}

func assetsOf(bundle, notFound string) map[string]any {
	return map[string]any{"bundle": rel("StaticAssetBundle", bundle), "runWorkerFirst": false, "notFoundHandling": notFound}
}

// WorkerVersion.assets (spec/lane-v1beta1.md §6.4, §14
// static-asset-spa-paths): the bundle relation is resolved and pinned;
// single_page_application needs index.html in the bundle's manifest
// (invalid_argument, nothing created); none does not; an absent bundle is
// resource_not_found; a pinned bundle cannot be deleted
// (dependency_in_use); and the check's exact scenario passes.
func TestV1beta1StaticAssetSPA(t *testing.T) {
	onStores(t, func(t *testing.T, o hosttest.Options) {
		b := startBeta(t, o)
		b.mustCreate("ModuleWorker", "module-worker-probe", map[string]any{})
		b.mustCreate("EdgeKVNamespace", "edge-kv-probe", map[string]any{})
		b.mustCreate("WorkerBundle", "worker-bundle-probe", map[string]any{"manifestDigest": b.workerBundle("fetch", "scheduled", "queue")})

		// The check's scenario, step by step.
		digest := b.upload(artifact.KindStaticAssetBundle, spaIndex)
		if digest != spaManifestDigest {
			t.Fatalf("the one-file index.html manifest digests to %s, want the probe's %s", digest, spaManifestDigest)
		}
		bundle := b.mustCreate("StaticAssetBundle", "static-assets-probe", map[string]any{"manifestDigest": digest})
		if bundle.Metadata.Generation != "1" {
			t.Errorf("bundle generation %s", bundle.Metadata.Generation)
		}
		b.mustCreate("WorkerVersion", "static-assets-spa-version", versionSpec(assetsOf("static-assets-probe", "single_page_application")))
		wantReady(t, "the SPA version", b.read("WorkerVersion", "static-assets-spa-version"), "True", "Available")

		// A pinned bundle cannot go.
		wantCode(t, "delete a bundle a version's assets pin", b.del("StaticAssetBundle", "static-assets-probe"), wire.DependencyInUse)
		if err := b.del("WorkerVersion", "static-assets-spa-version"); err != nil {
			t.Fatalf("delete the version: %v", err)
		}
		if err := b.del("StaticAssetBundle", "static-assets-probe"); err != nil {
			t.Fatalf("delete the bundle once unpinned: %v", err)
		}

		// No index.html: refused under single_page_application, nothing
		// created; accepted under none.
		noIndex := b.upload(artifact.KindStaticAssetBundle, file{"app.js", "text/javascript", []byte("app")}, file{"Index.html", "text/html", []byte("<p>")})
		b.mustCreate("StaticAssetBundle", "no-index", map[string]any{"manifestDigest": noIndex})
		_, err := b.create("WorkerVersion", "spa-without-index", versionSpec(assetsOf("no-index", "single_page_application")))
		if we := wantCode(t, "an SPA version whose bundle lists no index.html", err, wire.InvalidArgument); we != nil && we.HostCode != "spa_index_missing" {
			t.Errorf("hostCode %q (%s)", we.HostCode, we.Message)
		}
		if _, err := b.c.Read(context.Background(), b.addr("WorkerVersion", "spa-without-index")); err == nil {
			t.Error("the refused SPA version was created")
		}
		b.mustCreate("WorkerVersion", "plain-assets", versionSpec(assetsOf("no-index", "none")))
		// A version without assets reads no bundle at all.
		b.mustCreate("WorkerVersion", "no-assets", versionSpec(nil))

		// An absent bundle is the ordinary relation refusal.
		_, err = b.create("WorkerVersion", "missing-bundle", versionSpec(assetsOf("nowhere", "none")))
		if we := wantCode(t, "assets naming an absent bundle", err, wire.ResourceNotFound); we != nil && we.Details["pointer"] != "/spec/assets/bundle" {
			t.Errorf("the refusal points at %v, want /spec/assets/bundle", we.Details["pointer"])
		}
	})
}

// The index.html rule runs again at a 202 commit (spec/lane-v1beta1.md
// §4): a version accepted over a bundle listing index.html, whose bundle
// is replaced by one without it before the operation commits, fails at
// commit with invalid_argument and is not created.
func TestV1beta1SPARuleRerunsAtCommit(t *testing.T) {
	b := startBeta(t, hosttest.Options{Probe: true})
	b.mustCreate("ModuleWorker", "module-worker-probe", map[string]any{})
	b.mustCreate("EdgeKVNamespace", "edge-kv-probe", map[string]any{})
	b.mustCreate("WorkerBundle", "worker-bundle-probe", map[string]any{"manifestDigest": b.workerBundle("fetch", "scheduled", "queue")})
	b.mustCreate("StaticAssetBundle", "site", map[string]any{"manifestDigest": b.upload(artifact.KindStaticAssetBundle, spaIndex)})

	// Accepted under the probe's async: it commits on the caller's polls.
	ans := put(t, b.h, b.c, b.request("WorkerVersion", "spa", versionSpec(assetsOf("site", "single_page_application"))), "spa-accept", "async")
	var env wire.OperationEnvelope
	if err := json.Unmarshal(ans.body, &env); ans.status != 202 || err != nil {
		t.Fatalf("accept: HTTP %d %s (%v)", ans.status, ans.body, err)
	}
	if err := b.del("StaticAssetBundle", "site"); err != nil {
		t.Fatalf("delete the accepted version's bundle: %v", err)
	}
	b.mustCreate("StaticAssetBundle", "site", map[string]any{"manifestDigest": b.upload(artifact.KindStaticAssetBundle, file{"app.js", "text/javascript", []byte("app")})})
	_, err := b.c.WaitOperation(context.Background(), env.Operation.ID)
	if we := wantCode(t, "the version's commit over a bundle without index.html", err, wire.InvalidArgument); we != nil && we.HostCode != "spa_index_missing" {
		t.Errorf("hostCode %q: %s", we.HostCode, we.Message)
	}
	if _, err := b.c.Read(context.Background(), b.addr("WorkerVersion", "spa")); err == nil {
		t.Error("the version refused at commit exists")
	}
}
