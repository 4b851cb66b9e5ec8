package edgehost

import (
	"errors"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

// GroupV1beta1 is the Form group of the Edge family's v1beta1 line, which
// lane forms.takoform.com/v1beta1 answers (spec/lane-v1beta1.md §6.3).
const GroupV1beta1 = edge.GroupV1beta1

// Kinds new in the v1beta1 group (spec/lane-v1beta1.md §6.6, §6.7).
const (
	StaticAssetBundle          = "StaticAssetBundle"
	SQLiteDatabase             = "SQLiteDatabase"
	SQLiteMigrationSet         = "SQLiteMigrationSet"
	SQLiteMigrationApplication = "SQLiteMigrationApplication"
)

// ManifestKinds maps each artifact-backed Form kind of the v1beta1 group
// to the one manifest kind its manifestDigest must name
// (spec/lane-v1beta1.md §3.6). In the v1alpha1 group only WorkerBundle is
// artifact-backed, with the same kind.
var ManifestKinds = map[string]string{
	WorkerBundle:       artifact.KindWorkerBundle,
	StaticAssetBundle:  artifact.KindStaticAssetBundle,
	SQLiteMigrationSet: artifact.KindMigrationBundle,
}

// v1beta1Kind is def's kind when def is a Form of the v1beta1 group, else "".
func v1beta1Kind(def *form.Definition) string {
	if def.Ref().APIVersion != GroupV1beta1 {
		return ""
	}
	return def.Ref().Kind
}

// manifestKind is the manifest kind def's manifestDigest names, "" when
// def is not artifact-backed.
func manifestKind(def *form.Definition) string {
	switch {
	case kindOf(def) == WorkerBundle:
		return artifact.KindWorkerBundle
	case v1beta1Kind(def) != "":
		return ManifestKinds[def.Ref().Kind]
	}
	return ""
}

// ArtifactLimits are the manifest rules a revision of group is held to:
// f.Artifacts, and on the v1beta1 group also the MigrationBundle media
// type rule (spec/lane-v1beta1.md §3.6). A host's commit route uses the
// same for the lane the commit arrives on (v1beta1 → GroupV1beta1), so
// lane v1alpha3 answers as before.
func (f *Family) ArtifactLimits(group string) artifact.Limits {
	return LimitsFor(f.Artifacts, group)
}

// LimitsFor is base with the rules group adds: on GroupV1beta1 the
// MigrationBundle media type rule (spec/lane-v1beta1.md §3.6); any other
// group adds none.
func LimitsFor(base artifact.Limits, group string) artifact.Limits {
	if group == GroupV1beta1 {
		base.SQLMigrationFiles = true
	}
	return base
}

// Limits advertises the bundle limits (spec/host-api-v1alpha3.md §8.1):
// maximumBundleBytes on WorkerBundle and WorkerVersion of either group;
// on the v1beta1 group, the three artifact-backed Forms also carry
// maximumBundleFiles (4096 for WorkerBundle, 16384 for StaticAssetBundle
// and SQLiteMigrationSet) and StaticAssetBundle and SQLiteMigrationSet
// maximumBundleBytes too (spec/lane-v1beta1.md §8.1).
func (f *Family) Limits(def *form.Definition) map[string]int64 {
	kind := kindOf(def)
	if kind == "" {
		return nil
	}
	if mk := manifestKind(def); mk != "" && def.Ref().APIVersion == GroupV1beta1 {
		return map[string]int64{"maximumBundleBytes": f.Artifacts.MaximumBundleBytes, "maximumBundleFiles": int64(artifact.MaximumBundleFiles(mk))}
	}
	switch kind {
	case WorkerBundle, WorkerVersion:
		return map[string]int64{"maximumBundleBytes": f.Artifacts.MaximumBundleBytes}
	}
	return nil
}

// resolveManifest resolves a manifest the tenant holds for a revision of
// group and checks every manifest rule (spec/host-api-v1alpha3.md §3.6
// "on apply/import of a bundle-shaped revision"; spec/lane-v1beta1.md
// §3.6): not held → artifact_missing; undecodable, digest mismatch,
// another kind than want, or any rule of ArtifactLimits(group) →
// artifact_invalid.
func (f *Family) resolveManifest(tx store.Tx, tenant, digest, group, want string) (*wire.Manifest, error) {
	held, err := tx.Holds(tenant, digest)
	if err != nil {
		return nil, err
	}
	doc, err := tx.Manifest(digest)
	if !held || errors.Is(err, store.ErrNotFound) {
		return nil, errorf(wire.ArtifactMissing, "manifest_missing", "manifest %s is not held by this tenant; upload and commit the %s first", digest, want)
	}
	if err != nil {
		return nil, err
	}
	m, err := artifact.ParseManifest(doc)
	if err != nil {
		return nil, errorf(wire.ArtifactInvalid, "manifest_invalid", "manifest %s cannot be decoded: %v", digest, err)
	}
	if got, err := artifact.Digest(m); err != nil || got != digest {
		return nil, errorf(wire.ArtifactInvalid, "manifest_digest", "manifest %s digests to %s", digest, got)
	}
	if m.Kind != want {
		return nil, errorf(wire.ArtifactInvalid, "manifest_kind", "manifest %s is a %s, not a %s; commit a %s manifest and name its digest", digest, m.Kind, want, want)
	}
	if err := artifact.Verify(m, f.ArtifactLimits(group)); err != nil {
		return nil, errorf(wire.ArtifactInvalid, "manifest_invalid", "manifest %s: %v", digest, err)
	}
	return m, nil
}

// manifestOf resolves the manifest of a stored artifact-backed revision
// (resolveManifest with the kind its Form requires).
func (f *Family) manifestOf(tx store.Tx, rev *store.Resource) (*wire.Manifest, string, error) {
	digest, err := specString(rev, "manifestDigest")
	if err != nil {
		return nil, "", err
	}
	want := ManifestKinds[rev.Kind]
	m, err := f.resolveManifest(tx, rev.Tenant, digest, rev.APIVersion, want)
	return m, digest, err
}

// checkAssets applies the WorkerVersion.assets rule (spec/lane-v1beta1.md
// §6.4) on apply, import and at 202 commit: the bundle's manifest is a
// StaticAssetBundle the tenant holds, and with notFoundHandling
// single_page_application it lists index.html (else invalid_argument).
// Without assets nothing is read.
func (f *Family) checkAssets(tx store.Tx, res *store.Resource, spec map[string]any) error {
	assets, ok := spec["assets"].(map[string]any)
	if !ok {
		return nil
	}
	bundle, err := lookup(tx, key(res, StaticAssetBundle, relName(assets, "bundle")))
	if err != nil || bundle == nil {
		return err // relation resolution already refused an absent bundle
	}
	m, digest, err := f.manifestOf(tx, bundle)
	if err != nil {
		return err
	}
	if ijson.As[string](assets["notFoundHandling"]) == "single_page_application" && !artifact.HasFile(m, artifact.SPAIndex) {
		return wire.Errorf(wire.InvalidArgument, "assets.notFoundHandling is single_page_application, but StaticAssetBundle %q (manifest %s) lists no %s; add %s to the bundle or set notFoundHandling to none",
			bundle.Name, digest, artifact.SPAIndex, artifact.SPAIndex).WithHostCode("spa_index_missing").WithDetail("pointer", "/spec/assets/notFoundHandling")
	}
	return nil
}
