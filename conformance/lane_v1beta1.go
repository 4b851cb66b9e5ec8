package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// V1beta1Group is the Form group of the v1beta1 Edge family, which lane
// forms.takoform.com/v1beta1 answers (spec/lane-v1beta1.md §6.3).
const V1beta1Group = edge.GroupV1beta1

// V1beta1Checks are the two checks lane v1beta1 adds to Appendix A, at
// positions 82 and 83, right after manifest-reference-is-not-a-capability
// (spec/lane-v1beta1.md §14, Appendix A). They drive the v1beta1 Edge
// family's Forms, whatever lane the Env negotiated, and are not in the
// v1alpha3 registry (Checks): a run of lane v1beta1 lists them.
var V1beta1Checks = []Check{
	{ID: "static-asset-spa-paths", Group: "artifacts", Summary: "a WorkerVersion whose assets serve a single-page application over a bundle listing index.html is Ready; version and bundle delete in order", Run: staticAssetSPAPaths},
	{ID: "sqlite-migration-ledger-readiness", Group: "artifacts", Summary: "an application whose set equals the database's ledger is Ready; a superset applied after it turns it Reconciling", Run: sqliteMigrationLedgerReadiness},
}

// The probe's StaticAssetBundle: one file index.html, text/html, these 16
// bytes; its manifest digest is the probe's manifestDigest
// (spec/lane-v1beta1.md §14).
var (
	spaIndexHTML       = []byte("<!doctype html>\n")
	spaManifestDigest  = "sha256:cbe2b727409837573d4b24ee47f5796e187945e383609098b931f1b6d072c856"
	migration0001Bytes = []byte("CREATE TABLE t (id INTEGER);\n")             // 29 bytes, as the probe's 0001.sql
	migration0002Bytes = []byte("CREATE INDEX t_id ON t (id, id, id, id);\n") // 40 bytes, as the probe's 0002.sql
)

// beta is the v1beta1 family as the host serves it to e.A1: one exact
// FormRef per kind (the 0.1.0 line where a kind has several), in a space
// of its own.
type beta struct {
	e     *Env
	refs  map[string]form.FormRef
	space string
}

func newBeta(ctx context.Context, e *Env, kinds ...string) (*beta, error) {
	profiles, err := e.A1.SupportForms(ctx)
	if err != nil {
		return nil, fmt.Errorf("read support profiles: %w", err)
	}
	b := &beta{e: e, refs: map[string]form.FormRef{}, space: e.Space + " " + randomHex(3)}
	for _, p := range profiles.Profiles {
		if p.FormRef == nil || p.FormRef.APIVersion != V1beta1Group {
			continue
		}
		if have, ok := b.refs[p.FormRef.Kind]; ok && have.DefinitionVersion == "0.1.0" {
			continue
		}
		b.refs[p.FormRef.Kind] = *p.FormRef
	}
	for _, k := range kinds {
		if _, ok := b.refs[k]; !ok {
			return nil, skipf("the host serves no %s %s", V1beta1Group, k)
		}
	}
	return b, nil
}

func betaRel(kind, name string) map[string]any {
	return map[string]any{"apiVersion": V1beta1Group, "kind": kind, "name": name}
}

func (b *beta) create(ctx context.Context, kind, name string, spec any) (*wire.Resource, error) {
	res, err := b.e.Apply(ctx, b.e.A1, b.e.RequestIn(b.space, b.refs[kind], name, spec), nil)
	if err != nil {
		return nil, fmt.Errorf("create %s %q: %w", kind, name, err)
	}
	return res, nil
}

func (b *beta) read(ctx context.Context, kind, name string) (*wire.Resource, error) {
	res, err := b.e.A1.Read(ctx, client.Address{Space: b.space, Ref: b.refs[kind], Name: name})
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", kind, name, err)
	}
	return res, nil
}

// remove deletes kind name under its current generation; the answer must
// be the 204 of a committed delete (DeleteAndWait settles a 202 first).
func (b *beta) remove(ctx context.Context, kind, name string) error {
	res, err := b.read(ctx, kind, name)
	if err != nil {
		return err
	}
	if err := b.e.Delete(ctx, b.e.A1, res); err != nil {
		return fmt.Errorf("delete %s %q: %w", kind, name, err)
	}
	return nil
}

// commitFiles uploads and commits a files manifest of kind and returns
// its digest.
func (b *beta) commitFiles(ctx context.Context, kind string, files ...probeBlob) (string, error) {
	m := wire.Manifest{APIVersion: wire.ArtifactsAPI, Kind: kind, Files: []wire.ManifestFile{}}
	blobs := map[string][]byte{}
	for _, f := range files {
		m.Files = append(m.Files, f.file)
		blobs[f.file.Digest] = f.data
	}
	d, err := b.e.A1.UploadArtifact(ctx, m, blobs)
	if err != nil {
		return "", fmt.Errorf("commit a %s: %w", kind, err)
	}
	return d, nil
}

// probeBlob is one file of a probe manifest with its bytes.
type probeBlob struct {
	file wire.ManifestFile
	data []byte
}

func probeFile(path, mediaType string, data []byte) probeBlob {
	return probeBlob{wire.ManifestFile{Path: path, MediaType: mediaType, Size: int64(len(data)), Digest: ijson.SumDigest(data)}, data}
}

// wantReadyCond reads kind name and checks its Ready condition.
func (b *beta) wantReadyCond(ctx context.Context, kind, name, status, reason string) (*wire.Condition, error) {
	res, err := b.read(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			if c.Status != status || c.Reason != reason {
				return nil, fmt.Errorf("%s %q is Ready=%s/%s (%s), want %s/%s", kind, name, c.Status, c.Reason, c.HostReason, status, reason)
			}
			return &c, nil
		}
	}
	return nil, fmt.Errorf("%s %q has no Ready condition", kind, name)
}

// staticAssetSPAPaths: spec/lane-v1beta1.md §14 static-asset-spa-paths,
// over the version probe's worker, bundle (exporting fetch, scheduled and
// queue) and KV namespace, created here.
func staticAssetSPAPaths(ctx context.Context, e *Env) error {
	b, err := newBeta(ctx, e, "ModuleWorker", "WorkerBundle", "EdgeKVNamespace", "StaticAssetBundle", "WorkerVersion")
	if err != nil {
		return err
	}
	code, err := e.UploadBundle(ctx, e.A1, Module("fetch", "scheduled", "queue"))
	if err != nil {
		return err
	}
	for _, r := range []struct {
		kind, name string
		spec       map[string]any
	}{
		{"ModuleWorker", "module-worker-probe", map[string]any{}},
		{"EdgeKVNamespace", "edge-kv-probe", map[string]any{}},
		{"WorkerBundle", "worker-bundle-probe", map[string]any{"manifestDigest": code}},
	} {
		if _, err := b.create(ctx, r.kind, r.name, r.spec); err != nil {
			return err
		}
	}
	digest, err := b.commitFiles(ctx, artifact.KindStaticAssetBundle, probeFile("index.html", "text/html", spaIndexHTML))
	if err != nil {
		return err
	}
	if digest != spaManifestDigest {
		return fmt.Errorf("the index.html manifest was committed as %s, want %s", digest, spaManifestDigest)
	}
	if _, err := b.create(ctx, "StaticAssetBundle", "static-assets-probe", map[string]any{"manifestDigest": digest}); err != nil {
		return err
	}
	version := map[string]any{
		"worker":     betaRel("ModuleWorker", "module-worker-probe"),
		"bundle":     betaRel("WorkerBundle", "worker-bundle-probe"),
		"handlers":   []string{"fetch", "scheduled", "queue"},
		"kvBindings": []any{map[string]any{"name": "CACHE", "resource": betaRel("EdgeKVNamespace", "edge-kv-probe")}},
		"assets":     map[string]any{"bundle": betaRel("StaticAssetBundle", "static-assets-probe"), "runWorkerFirst": false, "notFoundHandling": "single_page_application"},
	}
	if _, err := b.create(ctx, "WorkerVersion", "static-assets-spa-version", version); err != nil {
		return err
	}
	if _, err := b.wantReadyCond(ctx, "WorkerVersion", "static-assets-spa-version", "True", "Available"); err != nil {
		return err
	}
	for _, r := range [][2]string{{"WorkerVersion", "static-assets-spa-version"}, {"StaticAssetBundle", "static-assets-probe"},
		{"WorkerBundle", "worker-bundle-probe"}, {"EdgeKVNamespace", "edge-kv-probe"}, {"ModuleWorker", "module-worker-probe"}} {
		if err := b.remove(ctx, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// sqliteMigrationLedgerReadiness: spec/lane-v1beta1.md §14
// sqlite-migration-ledger-readiness. The data sets carry only the probe's
// manifest digests, not its SQL, so the two files here are SQL of the
// probe's sizes (29 and 40 bytes).
func sqliteMigrationLedgerReadiness(ctx context.Context, e *Env) error {
	b, err := newBeta(ctx, e, "SQLiteDatabase", "SQLiteMigrationSet", "SQLiteMigrationApplication")
	if err != nil {
		return err
	}
	f1 := probeFile("0001.sql", artifact.MediaTypeSQL, migration0001Bytes)
	f2 := probeFile("0002.sql", artifact.MediaTypeSQL, migration0002Bytes)
	setA, err := b.commitFiles(ctx, artifact.KindMigrationBundle, f1)
	if err != nil {
		return err
	}
	app := func(set string) map[string]any {
		return map[string]any{"database": betaRel("SQLiteDatabase", "sqlite-database-probe"), "migrationSet": betaRel("SQLiteMigrationSet", set)}
	}
	for _, r := range []struct {
		kind, name string
		spec       map[string]any
	}{
		{"SQLiteDatabase", "sqlite-database-probe", map[string]any{}},
		{"SQLiteMigrationSet", "sqlite-migration-set-probe", map[string]any{"manifestDigest": setA}},
		{"SQLiteMigrationApplication", "sqlite-migration-application-probe", app("sqlite-migration-set-probe")},
	} {
		if _, err := b.create(ctx, r.kind, r.name, r.spec); err != nil {
			return err
		}
	}
	if _, err := b.wantReadyCond(ctx, "SQLiteMigrationApplication", "sqlite-migration-application-probe", "True", "Available"); err != nil {
		return err
	}
	setB, err := b.commitFiles(ctx, artifact.KindMigrationBundle, f1, f2)
	if err != nil {
		return err
	}
	if _, err := b.create(ctx, "SQLiteMigrationSet", "sqlite-migration-set-superset", map[string]any{"manifestDigest": setB}); err != nil {
		return err
	}
	if _, err := b.create(ctx, "SQLiteMigrationApplication", "sqlite-migration-application-superset", app("sqlite-migration-set-superset")); err != nil {
		return err
	}
	if _, err := b.wantReadyCond(ctx, "SQLiteMigrationApplication", "sqlite-migration-application-superset", "True", "Available"); err != nil {
		return err
	}
	c, err := b.wantReadyCond(ctx, "SQLiteMigrationApplication", "sqlite-migration-application-probe", "False", "Reconciling")
	if err != nil {
		return fmt.Errorf("after the superset: %w", err)
	}
	if c.HostReason == "" || strings.Contains(c.HostReason, "one live") {
		return fmt.Errorf("the first application's hostReason %q must be non-empty and claim no one-live-application policy", c.HostReason)
	}
	for _, r := range [][2]string{
		{"SQLiteMigrationApplication", "sqlite-migration-application-superset"}, {"SQLiteMigrationApplication", "sqlite-migration-application-probe"},
		{"SQLiteMigrationSet", "sqlite-migration-set-superset"}, {"SQLiteMigrationSet", "sqlite-migration-set-probe"}, {"SQLiteDatabase", "sqlite-database-probe"},
	} {
		if err := b.remove(ctx, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}
