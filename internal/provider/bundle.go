package provider

import (
	"context"
	"errors"
	"fmt"
	"github.com/takoform/takoform/form"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/wire"
)

// localBundle reads the module files a WorkerBundle declares, parses each
// JavaScript module (artifact.ModuleSyntax: an error names the module,
// line and column) and builds its manifest (artifact.Build: sorted,
// digests and sizes from the bytes).
func localBundle(plan map[string]any) (*wire.Manifest, map[string][]byte, []any, error) {
	main := str(plan, "main_module")
	var files []artifact.ModuleFile
	mods := asList(plan["modules"])
	recorded := make([]map[string]any, 0, len(mods))
	for i, m := range mods {
		mm := mapOf(m)
		path := str(mm, "content_file")
		if mm["content_file"] == nil {
			return nil, nil, nil, fmt.Errorf("modules[%d] (%q) sets no content_file: set it to the local file holding the module", i, str(mm, "name"))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("modules[%d]: %w", i, err)
		}
		ct := str(mm, "content_type")
		if ct == "" {
			var ok bool
			if ct, ok = artifact.MediaTypeForName(str(mm, "name")); !ok {
				return nil, nil, nil, fmt.Errorf("modules[%d]: no media type for %q; set content_type", i, str(mm, "name"))
			}
		}
		if err := artifact.ModuleSyntax(str(mm, "name"), ct, data); err != nil {
			return nil, nil, nil, fmt.Errorf("modules[%d] (%s): %w", i, path, err)
		}
		files = append(files, artifact.ModuleFile{Name: str(mm, "name"), MediaType: ct, Data: data})
		recorded = append(recorded, copyAttrs(mm))
	}
	m, blobs, err := artifact.Build(main, files)
	if err != nil {
		return nil, nil, nil, err
	}
	byName := map[string]wire.ManifestModule{}
	for _, mod := range m.Modules {
		byName[mod.Name] = mod
	}
	out := make([]any, 0, len(recorded))
	for _, om := range recorded {
		mod := byName[str(om, "name")]
		om["digest"], om["size"] = mod.Digest, mod.Size
		out = append(out, om)
	}
	return m, blobs, out, nil
}

// planBundle: a bundle is declared in exactly one mode — manifest_digest
// of a committed manifest, or local authoring (main_module + modules),
// whose files are hashed now so changed bytes change the plan.
func (r *Resource) planBundle(plan, config, state map[string]any, id identity) diag.Diagnostics {
	local := config["modules"] != nil || config["main_module"] != nil
	if !local {
		plan["main_module"], plan["modules"] = nil, nil
		if state != nil && importedModules(state["modules"]) {
			plan["main_module"], plan["modules"] = state["main_module"], state["modules"] // as imported
		}
	}
	switch {
	case local && config["manifest_digest"] != nil:
		return renderError("A bundle is declared in one mode", errors.New("set manifest_digest, or main_module with modules, not both"), withCode(id, CodeBundleFiles))
	case !local && config["manifest_digest"] == nil:
		return renderError("A bundle needs its code", errors.New("set manifest_digest, or main_module with modules"), withCode(id, CodeBundleFiles))
	case !local:
		return nil
	}
	if !known(config["modules"]) || !known(config["main_module"]) {
		plan["manifest_digest"] = Unknown
		return nil
	}
	m, _, mods, err := localBundle(plan)
	if err != nil {
		return bundleFilesError(err, id)
	}
	dg, err := artifact.Digest(m)
	if err != nil {
		return renderError("Cannot digest the bundle manifest", err, withCode(id, CodeBundleFiles))
	}
	plan["manifest_digest"], plan["modules"] = dg, mods
	if state != nil && str(state, "manifest_digest") == dg && str(state, "main_module") == str(plan, "main_module") && sameModules(state["modules"], mods) {
		plan["modules"] = state["modules"] // an imported bundle whose files hash as recorded: no change
	}
	return nil
}

// uploadBundle uploads local module files through the artifact routes
// and checks the committed digest is the one planned.
func (r *Resource) uploadBundle(ctx context.Context, ref form.FormRef, plan map[string]any, id identity) diag.Diagnostics {
	if plan["modules"] == nil || importedModules(plan["modules"]) {
		return nil // committed already (manifest_digest, or the imported manifest)
	}
	m, blobs, _, err := localBundle(plan)
	if err != nil {
		return bundleFilesError(err, id)
	}
	return r.uploadManifest(ctx, ref, m, blobs, str(plan, "manifest_digest"), id)
}

// uploadManifest uploads and commits a manifest built from local files
// through the artifact routes of ref's lane (clientFor) and checks the
// committed digest is want, the one planned (a bundle's modules, or a
// FilesKind type's files).
func (r *Resource) uploadManifest(ctx context.Context, ref form.FormRef, m *wire.Manifest, blobs map[string][]byte, want string, id identity) diag.Diagnostics {
	hc, err := r.data.clientFor(ctx, ref)
	if err != nil {
		return renderError("Cannot upload the bundle", err, id)
	}
	dg, err := hc.UploadArtifact(ctx, *m, blobs)
	if err != nil {
		return renderError("Cannot upload the bundle", err, id)
	}
	if dg != want {
		return renderError("The bundle's files changed after plan", fmt.Errorf("planned manifest %s, uploaded %s", want, dg), withCode(id, CodeBundleFiles))
	}
	return nil
}
