package artifact_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/takoform/takoform/artifact"
	"github.com/takoform/takoform/ijson"
)

// TestBuildFilesOrder: a StaticAssetBundle lists its files sorted by path,
// so any order of the same files gives one manifestDigest; a
// MigrationBundle keeps the given order, which is the migration order, so
// a reordered set is another set (spec/lane-v1beta1.md §3.6, §6.7).
func TestBuildFilesOrder(t *testing.T) {
	a := artifact.File{Path: "b/app.css", MediaType: "text/css", Data: []byte("body{}")}
	b := artifact.File{Path: "a.html", MediaType: "text/html", Data: []byte("<p>")}
	digest := func(kind string, fs ...artifact.File) string {
		t.Helper()
		m, blobs, err := artifact.BuildFiles(kind, fs, artifact.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if got := blobs[f.Digest]; string(got) == "" || ijson.SumDigest(got) != f.Digest || int64(len(got)) != f.Size {
				t.Errorf("%s: blob of %s does not match its entry", kind, f.Path)
			}
		}
		if err := artifact.Verify(m, artifact.Limits{SQLMigrationFiles: true}); err != nil {
			t.Fatal(err)
		}
		d, err := artifact.Digest(m)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d1, d2 := digest(artifact.KindStaticAssetBundle, a, b), digest(artifact.KindStaticAssetBundle, b, a); d1 != d2 {
		t.Errorf("static assets in two orders digest %s and %s", d1, d2)
	}
	m1 := artifact.File{Path: "0001_a.sql", MediaType: artifact.MediaTypeSQL, Data: []byte("CREATE TABLE a (x);")}
	m2 := artifact.File{Path: "0002_b.sql", MediaType: artifact.MediaTypeSQL, Data: []byte("CREATE TABLE b (x);")}
	if d1, d2 := digest(artifact.KindMigrationBundle, m1, m2), digest(artifact.KindMigrationBundle, m2, m1); d1 == d2 {
		t.Error("migrations in two orders digest alike; their order is the migration order")
	}
	m, _, err := artifact.BuildFiles(artifact.KindMigrationBundle, []artifact.File{m2, m1}, artifact.Limits{})
	if err != nil || m.Files[0].Path != "0002_b.sql" {
		t.Errorf("the migration order was not kept: %v %v", m, err)
	}
}

// TestBuildFilesRefusals: BuildFiles refuses, with the rule a host applies
// at commit on lane v1beta1, what the host would refuse.
func TestBuildFilesRefusals(t *testing.T) {
	sql := func(p string) artifact.File {
		return artifact.File{Path: p, MediaType: artifact.MediaTypeSQL, Data: []byte("SELECT 1;")}
	}
	for _, c := range []struct {
		name, kind string
		files      []artifact.File
		lim        artifact.Limits
		rule       string
	}{
		{"no files", artifact.KindStaticAssetBundle, nil, artifact.Limits{}, artifact.RuleCount},
		{"media type with parameters", artifact.KindStaticAssetBundle, []artifact.File{{Path: "a.html", MediaType: "text/html; charset=utf-8"}}, artifact.Limits{}, artifact.RuleMediaType},
		{"upper-case media type", artifact.KindStaticAssetBundle, []artifact.File{{Path: "a.html", MediaType: "Text/HTML"}}, artifact.Limits{}, artifact.RuleMediaType},
		{"migration not application/sql", artifact.KindMigrationBundle, []artifact.File{{Path: "0001.sql", MediaType: "text/plain"}}, artifact.Limits{}, artifact.RuleMigrationMediaType},
		{"path with ..", artifact.KindStaticAssetBundle, []artifact.File{{Path: "../a.html", MediaType: "text/html"}}, artifact.Limits{}, artifact.RulePath},
		{"path with a leading /", artifact.KindStaticAssetBundle, []artifact.File{{Path: "/a.html", MediaType: "text/html"}}, artifact.Limits{}, artifact.RulePath},
		{"duplicate path", artifact.KindMigrationBundle, []artifact.File{sql("0001.sql"), sql("0001.sql")}, artifact.Limits{}, artifact.RuleDuplicate},
		{"above maximumBundleBytes", artifact.KindMigrationBundle, []artifact.File{sql("0001.sql"), sql("0002.sql")}, artifact.Limits{MaximumBundleBytes: 10}, artifact.RuleLimit},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := artifact.BuildFiles(c.kind, c.files, c.lim)
			var ae *artifact.Error
			if !errors.As(err, &ae) || ae.Rule != c.rule || !strings.HasPrefix(ae.Pointer, "/files") {
				t.Errorf("BuildFiles = %v, want rule %s at /files", err, c.rule)
			}
		})
	}
	many := make([]artifact.File, artifact.MaxFiles+1)
	for i := range many {
		many[i] = artifact.File{Path: fmt.Sprintf("f%06d", i), MediaType: "text/plain"}
	}
	if _, _, err := artifact.BuildFiles(artifact.KindStaticAssetBundle, many, artifact.Limits{}); err == nil || !strings.Contains(err.Error(), "give 1 to 16384") {
		t.Errorf("16385 files: %v", err)
	}
}
