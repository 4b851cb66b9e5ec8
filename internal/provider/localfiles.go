package provider

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/provider/tfschema"
	"github.com/takoform/takoform/wire"
)

// Local files authoring of takoform_static_asset_bundle and
// takoform_sqlite_migration_set (spec/lane-v1beta1.md §13.2): a revision
// is declared either by manifest_digest of a manifest the tenant holds,
// or by local `files`, read and hashed at plan, checked by the rules the
// host applies at commit (artifact.BuildFiles → artifact.Verify), then
// uploaded and committed at create as the type's manifest kind
// (TypeSpec.FilesKind) through the bundle's upload path (uploadManifest).
// Bytes never enter state: each file keeps its path, media type, local
// file, size and digest.

// filesAttribute is the `files` list of a FilesKind type: 1..16384 files
// (artifact.MaxFiles). Public provider 2.1.1 declares it Optional; it is
// also Computed here, as `modules` is, so an import can record the
// committed manifest's files (content_file null) and a configuration
// whose local files hash to them plans no change (an optional attribute
// gaining Computed keeps the surface floor, spec/terraform-surface.md).
func filesAttribute(kind string) *tfschema.Attr {
	order := "Their order means nothing: the manifest lists them sorted by path."
	mt := "Media type: one lowercase `type/subtype` token without parameters, e.g. `text/html`."
	if kind == artifact.KindMigrationBundle {
		order = "Their order is the migration order; a new migration is a new set (an appended entry), never an edit."
		mt = "Media type; must be exactly `" + artifact.MediaTypeSQL + "`."
	}
	return &tfschema.Attr{Kind: tfschema.ListNested, Optional: true, Computed: true,
		Description: fmt.Sprintf("Local files uploaded and committed as a %s manifest (1 to %d); paths stay in state, bytes never do. %s A files edit that leaves the computed manifest_digest unchanged replaces nothing. Set either files or manifest_digest. Import reads the files from the committed manifest (content_file null); local files hashing to those digests then plan no change.", kind, artifact.MaxFiles, order),
		Nested: map[string]*tfschema.Attr{
			"path":         {Kind: tfschema.String, Required: true, Description: "Path of the file inside the bundle (`^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$`, at most 240 characters)."},
			"media_type":   {Kind: tfschema.String, Required: true, Description: mt},
			"content_file": {Kind: tfschema.String, Optional: true, Description: "Local file holding the bytes; required to author the bundle."},
			"size":         {Kind: tfschema.Int64, Computed: true, Description: "Size of the file in bytes, computed by the provider."},
			"digest":       {Kind: tfschema.String, Computed: true, Description: "sha256 of the file, computed by the provider."},
		}}
}

// localFiles reads the files a plan declares and builds the manifest of
// kind (artifact.BuildFiles): the manifest, its blobs, and the files list
// with each size and digest filled in, in the configured order.
func localFiles(kind string, plan map[string]any) (*wire.Manifest, map[string][]byte, []any, error) {
	list := asList(plan["files"])
	files := make([]artifact.File, 0, len(list))
	out := make([]any, 0, len(list))
	for i, f := range list {
		fm := mapOf(f)
		if fm["content_file"] == nil {
			return nil, nil, nil, fmt.Errorf("files[%d] (%q) sets no content_file: set it to the local file holding the bytes", i, str(fm, "path"))
		}
		data, err := os.ReadFile(str(fm, "content_file"))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("files[%d] (%q): %w", i, str(fm, "path"), err)
		}
		files = append(files, artifact.File{Path: str(fm, "path"), MediaType: str(fm, "media_type"), Data: data})
		rec := copyAttrs(fm)
		rec["size"], rec["digest"] = int64(len(data)), nil
		out = append(out, rec)
	}
	m, blobs, err := artifact.BuildFiles(kind, files, artifact.Limits{})
	if err != nil {
		return nil, nil, nil, err
	}
	byPath := map[string]string{}
	for _, e := range m.Files {
		byPath[e.Path] = e.Digest
	}
	for _, rec := range out {
		rm := mapOf(rec)
		rm["digest"] = byPath[str(rm, "path")]
	}
	return m, blobs, out, nil
}

// planFiles: a FilesKind revision is declared in exactly one mode; local
// files are read and hashed now, so changed bytes change manifest_digest
// (and so the derived name: a replacement), while a files edit that keeps
// the digest (a renamed local file, a reordered static asset list) plans
// an in-place change of state only.
func (r *Resource) planFiles(plan, config, state map[string]any, id identity) diag.Diagnostics {
	local := config["files"] != nil
	if !local {
		plan["files"] = nil
		if state != nil && importedModules(state["files"]) {
			plan["files"] = state["files"] // as imported
		}
	}
	switch {
	case local && config["manifest_digest"] != nil:
		return renderError("A bundle is declared in one mode", errors.New("set manifest_digest, or files, not both"), withCode(id, CodeBundleFiles))
	case !local && config["manifest_digest"] == nil:
		return renderError("A bundle needs its files", errors.New("set manifest_digest of a committed "+r.spec.FilesKind+" manifest, or files"), withCode(id, CodeBundleFiles))
	case !local:
		return nil
	}
	if !known(config["files"]) {
		plan["manifest_digest"] = Unknown
		return nil
	}
	m, _, files, err := localFiles(r.spec.FilesKind, plan)
	if err != nil {
		return filesError(err, id)
	}
	dg, err := artifact.Digest(m)
	if err != nil {
		return renderError("Cannot digest the bundle manifest", err, withCode(id, CodeBundleFiles))
	}
	plan["manifest_digest"], plan["files"] = dg, files
	if state != nil && str(state, "manifest_digest") == dg && sameFiles(state["files"], files) {
		plan["files"] = state["files"] // imported files that hash as recorded: no change
	}
	return nil
}

// sameFiles reports whether the recorded files (prior) were recorded by
// import (every content_file null) and describe the planned ones: the
// same paths, each with the same media type, digest and size.
func sameFiles(prior any, planned []any) bool {
	return importedModules(prior) && sameEntries(prior, planned, "path", func(hm, pm map[string]any) bool {
		return str(hm, "media_type") == str(pm, "media_type")
	})
}

// uploadFiles uploads and commits local files at create, through the
// artifact routes of ref's lane (the create ref, spec/lane-v1beta1.md §13.6).
func (r *Resource) uploadFiles(ctx context.Context, ref form.FormRef, plan map[string]any, id identity) diag.Diagnostics {
	if plan["files"] == nil || importedModules(plan["files"]) {
		return nil // committed already (manifest_digest, or the imported manifest)
	}
	m, blobs, _, err := localFiles(r.spec.FilesKind, plan)
	if err != nil {
		return filesError(err, id)
	}
	return r.uploadManifest(ctx, ref, m, blobs, str(plan, "manifest_digest"), id)
}

// filesError renders a local files refusal: the artifact rule (with its
// manifest pointer) when the manifest rules refused it, else the read
// error.
func filesError(err error, id identity) diag.Diagnostics {
	var ae *artifact.Error
	if errors.As(err, &ae) {
		id.Pointer = ae.Pointer
		return renderError("The bundle's files break a manifest rule ("+ae.Rule+")", err, withCode(id, CodePlanRule))
	}
	return renderError("Cannot read the bundle's files", err, withCode(id, CodeBundleFiles))
}
