package provider

import (
	"context"
	"errors"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/wire"
)

// Import round trip (spec/decisions/0007-orphan-recovery.md rule 3): an
// imported resource plans empty under the configuration that created it.
// The provider-side inputs the host does not store are recovered from the
// evidence it does: a bundle's main_module and modules, or a files
// revision's files, from its committed manifest (content_file null), a
// derived-name revision's revision_owner
// as "" (the name holds only a digest prefix of it). A configuration that
// matches that evidence plans the recorded value unchanged, which OpenTofu
// accepts for a non-null prior value.

// importSeeds are the provider-side attributes import records for res.
func (r *Resource) importSeeds(ctx context.Context, c *Codec, res *wire.Resource) (map[string]any, diag.Diagnostics) {
	seeds := map[string]any{}
	if r.spec.Revision && derivedName(r.spec.NamePrefix).MatchString(res.Metadata.Name) {
		seeds["revision_owner"] = ""
	}
	if !r.spec.LocalModules && r.spec.FilesKind == "" {
		return seeds, nil
	}
	decoded := map[string]any{}
	if err := r.decode(c, res, decoded, nil); err != nil {
		return nil, renderError("The host's answer cannot be recorded", err, identity{Type: r.spec.Name, Space: res.Metadata.Space, Name: res.Metadata.Name, Code: CodeHostResponseInvalid})
	}
	hc, err := r.data.clientFor(ctx, c.Ref)
	if err != nil {
		return nil, renderError("Cannot read the imported bundle's manifest", err, identity{Type: r.spec.Name, Space: res.Metadata.Space, Name: res.Metadata.Name, Form: &c.Ref})
	}
	m, err := hc.Manifest(ctx, str(decoded, "manifest_digest"))
	if err != nil {
		return nil, renderError("Cannot read the imported bundle's manifest", err, identity{Type: r.spec.Name, Space: res.Metadata.Space, Name: res.Metadata.Name, Form: &c.Ref})
	}
	if r.spec.FilesKind != "" {
		files := make([]any, 0, len(m.Files))
		for _, f := range m.Files {
			files = append(files, map[string]any{"path": f.Path, "media_type": f.MediaType, "content_file": nil, "digest": f.Digest, "size": f.Size})
		}
		seeds["files"] = files
		return seeds, nil
	}
	mods := make([]any, 0, len(m.Modules))
	for _, mod := range m.Modules {
		var ct any = mod.MediaType
		if byName, ok := artifact.MediaTypeForName(mod.Name); ok && byName == mod.MediaType {
			ct = nil // as a configuration that omits content_type derives it
		}
		mods = append(mods, map[string]any{"name": mod.Name, "content_type": ct, "content_file": nil, "digest": mod.Digest, "size": mod.Size})
	}
	seeds["main_module"], seeds["modules"] = m.MainModule, mods
	return seeds, nil
}

// derivedName matches the names planRevisionName derives for a prefix.
func derivedName(prefix string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + "-[0-9a-f]{1,12}-[0-9a-f]{12}$")
}

// importedModules reports whether modules (or files) were recorded by
// import: a non-empty list whose content_file are all null.
func importedModules(v any) bool {
	mods := asList(v)
	for _, m := range mods {
		if mapOf(m)["content_file"] != nil {
			return false
		}
	}
	return len(mods) > 0
}

// sameModules reports whether the recorded modules (prior) describe the
// planned ones: the same names, each with the same digest, size and media
// type, and a recorded content_file that is null (imported) or the
// planned one.
func sameModules(prior any, planned []any) bool {
	return sameEntries(prior, planned, "name", func(hm, pm map[string]any) bool {
		return mediaType(hm) == mediaType(pm) && (hm["content_file"] == nil || str(hm, "content_file") == str(pm, "content_file"))
	})
}

// sameEntries reports whether the recorded entries of a local files list
// (prior) describe the planned ones: the same values of key, each pair
// with the same digest and size and for which same holds.
func sameEntries(prior any, planned []any, key string, same func(recorded, planned map[string]any) bool) bool {
	have := asList(prior)
	if len(have) != len(planned) {
		return false
	}
	byKey := map[string]map[string]any{}
	for _, h := range have {
		byKey[str(mapOf(h), key)] = mapOf(h)
	}
	for _, p := range planned {
		pm := mapOf(p)
		hm, ok := byKey[str(pm, key)]
		if !ok || str(hm, "digest") != str(pm, "digest") || integerText(hm["size"]) != integerText(pm["size"]) || !same(hm, pm) {
			return false
		}
	}
	return true
}

func mediaType(m map[string]any) string {
	if ct := str(m, "content_type"); ct != "" {
		return ct
	}
	ct, _ := artifact.MediaTypeForName(str(m, "name"))
	return ct
}

func integerText(v any) string {
	if n, ok := integer(v); ok {
		return n.String()
	}
	return ""
}

// bundleFilesError renders a local bundle that cannot be built: a module
// that does not parse (takoform.provider/module-syntax, naming module,
// line and column), else unreadable or inconsistent files.
func bundleFilesError(err error, id identity) diag.Diagnostics {
	var ae *artifact.Error
	if errors.As(err, &ae) && ae.Rule == artifact.RuleModuleSyntax {
		return renderError("A bundle module does not parse", err, withCode(id, CodeModuleSyntax))
	}
	return renderError("Cannot read the bundle's module files", err, withCode(id, CodeBundleFiles))
}
