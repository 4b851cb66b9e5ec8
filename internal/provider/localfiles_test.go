package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/takoform/takoform/artifact"
)

// TestLocalFilesDigest: the files of a plan are read and hashed into the
// manifest of the type's kind; renaming the local file, or reordering
// static assets, keeps manifest_digest (replaces nothing); changed bytes
// change it (spec/lane-v1beta1.md §13.2).
func TestLocalFilesDigest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	idx, idx2, css := write("index.html", "<p>hi"), write("copy.html", "<p>hi"), write("app.css", "p{}")
	file := func(path, mt, content string) any {
		return map[string]any{"path": path, "media_type": mt, "content_file": content}
	}
	digest := func(kind string, files ...any) (string, []any) {
		t.Helper()
		m, _, out, err := localFiles(kind, map[string]any{"files": files})
		if err != nil {
			t.Fatal(err)
		}
		d, err := artifact.Digest(m)
		if err != nil {
			t.Fatal(err)
		}
		return d, out
	}
	d1, out := digest(artifact.KindStaticAssetBundle, file("index.html", "text/html", idx), file("app.css", "text/css", css))
	if f := mapOf(out[0]); str(f, "path") != "index.html" || f["size"] != int64(5) || !strings.HasPrefix(str(f, "digest"), "sha256:") || str(f, "content_file") != idx {
		t.Errorf("the planned files keep the configured order with size and digest: %v", out)
	}
	if d2, _ := digest(artifact.KindStaticAssetBundle, file("app.css", "text/css", css), file("index.html", "text/html", idx2)); d2 != d1 {
		t.Errorf("reordered static assets from a renamed file digest %s, want %s", d2, d1)
	}
	write("index.html", "<p>changed")
	if d3, _ := digest(artifact.KindStaticAssetBundle, file("index.html", "text/html", idx), file("app.css", "text/css", css)); d3 == d1 {
		t.Error("changed bytes kept the digest")
	}
	_, _, _, err := localFiles(artifact.KindMigrationBundle, map[string]any{"files": []any{file("0001.sql", "text/plain", css)}})
	if err == nil || !strings.Contains(err.Error(), "must be exactly application/sql") {
		t.Errorf("a non-SQL migration: %v", err)
	}
	_, _, _, err = localFiles(artifact.KindMigrationBundle, map[string]any{"files": []any{map[string]any{"path": "0001.sql", "media_type": "application/sql"}}})
	if err == nil || !strings.Contains(err.Error(), "files[0] (\"0001.sql\") sets no content_file") {
		t.Errorf("a file without content_file: %v", err)
	}
	_, _, _, err = localFiles(artifact.KindMigrationBundle, map[string]any{"files": []any{file("0001.sql", "application/sql", filepath.Join(dir, "absent.sql"))}})
	if err == nil || !strings.Contains(err.Error(), "absent.sql") {
		t.Errorf("a missing local file: %v", err)
	}
}

// TestV1beta1TypeSchemas: the three new types carry the envelope without
// update_timeout; every desired attribute of the migration application,
// and WorkerVersion.assets, forces replacement; the derived name prefixes
// are those of spec/lane-v1beta1.md §13.2.
func TestV1beta1TypeSchemas(t *testing.T) {
	reg, err := EdgeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for tn, prefix := range map[string]string{"takoform_static_asset_bundle": "static-asset-bundle", "takoform_sqlite_migration_set": "sqlite-migration-set", "takoform_sqlite_migration_application": ""} {
		ty := reg.Types[tn]
		if ty == nil {
			t.Fatalf("no type %s", tn)
		}
		if _, ok := ty.Schema.Attributes[attrUpdateTimeout]; ok || ty.HasUpdate {
			t.Errorf("%s has update_timeout", tn)
		}
		if ty.Revision != (prefix != "") || (prefix != "" && ty.NamePrefix != prefix) {
			t.Errorf("%s: revision %v, name prefix %q, want %q", tn, ty.Revision, ty.NamePrefix, prefix)
		}
		if len(ty.Create.Outputs) != 0 {
			t.Errorf("%s declares outputs %v; outputs_json is \"{}\"", tn, ty.Create.Outputs)
		}
	}
	app := reg.Types["takoform_sqlite_migration_application"].Schema.Attributes
	for _, a := range []string{"name", "database", "migration_set"} {
		s, ok := app[a].(schema.StringAttribute)
		if !ok || !s.Required || len(s.PlanModifiers) != 1 {
			t.Errorf("takoform_sqlite_migration_application.%s is not Required and replacing: %#v", a, app[a])
		}
	}
	as, ok := reg.Types["takoform_worker_version"].Schema.Attributes["assets"].(schema.SingleNestedAttribute)
	if !ok || !as.Optional || as.Required || as.Computed || len(as.PlanModifiers) != 1 {
		t.Fatalf("takoform_worker_version.assets: %#v", as)
	}
	for _, a := range []string{"bundle", "run_worker_first", "not_found_handling"} {
		if !as.Attributes[a].IsRequired() {
			t.Errorf("assets.%s is not Required", a)
		}
	}
	for _, r := range reg.Types["takoform_worker_version"].refsWith("assets") {
		if strings.Contains(r, "v1alpha1") {
			t.Errorf("refsWith(assets) names %s, whose definition has no assets", r)
		}
	}
}
