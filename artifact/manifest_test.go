package artifact

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/wire"
)

var (
	digestA = ijson.SumDigest([]byte("a"))
	digestB = ijson.SumDigest([]byte("b"))
)

func workerManifest() *wire.Manifest {
	return &wire.Manifest{
		APIVersion: wire.ArtifactsAPI,
		Kind:       KindWorkerBundle,
		MainModule: "worker.js",
		Modules: []wire.ManifestModule{
			{Name: "worker.js", MediaType: MediaTypeJavaScriptModule, Size: 1, Digest: digestA},
			{Name: "worker.js.map", MediaType: MediaTypeSourceMap, Size: 1, Digest: digestB},
			{Name: "lib/data.bin", MediaType: MediaTypeOctetStream, Size: 1, Digest: digestB},
		},
	}
}

func filesManifest(kind string) *wire.Manifest {
	return &wire.Manifest{
		APIVersion: wire.ArtifactsAPI,
		Kind:       kind,
		Files: []wire.ManifestFile{
			{Path: "index.html", MediaType: "text/html", Size: 1, Digest: digestA},
			{Path: "assets/app_1.0-min.js", MediaType: "text/javascript", Size: 1, Digest: digestB},
			{Path: "0001_init.sql", MediaType: "application/sql", Size: 1, Digest: digestA},
		},
	}
}

// doc returns m as JSON with edit applied to its generic form.
func doc(t *testing.T, m *wire.Manifest, edit func(map[string]any)) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(v)
	}
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	return b
}

func entryOf(v map[string]any, array string, i int) map[string]any {
	return v[array].([]any)[i].(map[string]any)
}

func wantRule(t *testing.T, err error, rule, pointer string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want *Error %s at %q", err, rule, pointer)
	}
	if e.Rule != rule || e.Pointer != pointer {
		t.Fatalf("got %s at %q (%s), want %s at %q", e.Rule, e.Pointer, e.Message, rule, pointer)
	}
	if e.Message == "" || !strings.Contains(e.Error(), rule) {
		t.Fatalf("error text %q lacks a message or the rule", e.Error())
	}
}

func TestValidManifests(t *testing.T) {
	for _, m := range []*wire.Manifest{workerManifest(), filesManifest(KindStaticAssetBundle), filesManifest(KindMigrationBundle)} {
		data := doc(t, m, nil)
		got, err := ParseManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		if err := Verify(got, Limits{MaximumBundleBytes: 3, MaxEntries: 3}); err != nil {
			t.Fatalf("%s at the limits: %v", m.Kind, err)
		}
		// Digest is ijson.DigestValue and equals the digest of the document.
		d, err := Digest(got)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ijson.DigestValue(m)
		fromDoc, _ := ijson.Digest(data)
		if d != want || d != fromDoc {
			t.Fatalf("%s: Digest %s, DigestValue %s, document digest %s", m.Kind, d, want, fromDoc)
		}
	}
}

// parseCase is a refused document: raw, or m as JSON after edit.
type parseCase struct {
	name    string
	m       *wire.Manifest
	edit    func(map[string]any)
	raw     string
	rule    string
	pointer string
}

func TestParseManifestRules(t *testing.T) {
	w, s := workerManifest(), filesManifest(KindStaticAssetBundle)
	set := func(array string, i int, k string, val any) func(map[string]any) {
		return func(v map[string]any) { entryOf(v, array, i)[k] = val }
	}
	cases := []parseCase{
		{name: "not JSON", raw: `{"apiVersion":`, rule: RuleDecode, pointer: "/apiVersion"},
		{name: "trailing data", raw: `{} {}`, rule: RuleDecode},
		{name: "null document", raw: `null`, rule: RuleDecode},
		{name: "duplicate member", raw: `{"kind":"WorkerBundle","kind":"WorkerBundle"}`, rule: RuleDecode, pointer: "/kind"},
		{name: "unknown member", m: w, edit: func(v map[string]any) { v["extra"] = 1 }, rule: RuleDecode, pointer: "/extra"},
		{name: "unknown entry member", m: w, edit: set("modules", 0, "type", "esm"), rule: RuleDecode, pointer: "/modules/0/type"},
		{name: "size not integer", m: w, edit: set("modules", 0, "size", "1"), rule: RuleDecode, pointer: "/modules/0/size"},
		{name: "size fraction", m: w, edit: set("modules", 0, "size", 1.5), rule: RuleDecode, pointer: "/modules/0/size"},
		{name: "null mainModule", m: w, edit: func(v map[string]any) { v["mainModule"] = nil }, rule: RuleDecode, pointer: "/mainModule"},
		{name: "null size", m: w, edit: set("modules", 1, "size", nil), rule: RuleDecode, pointer: "/modules/1/size"},
		{name: "null entry", m: w, edit: func(v map[string]any) { v["modules"].([]any)[2] = nil }, rule: RuleDecode, pointer: "/modules/2"},
		{name: "missing apiVersion", m: w, edit: func(v map[string]any) { delete(v, "apiVersion") }, rule: RuleRequired, pointer: "/apiVersion"},
		{name: "missing kind", m: w, edit: func(v map[string]any) { delete(v, "kind") }, rule: RuleRequired, pointer: "/kind"},
		{name: "worker without mainModule", m: w, edit: func(v map[string]any) { delete(v, "mainModule") }, rule: RuleRequired, pointer: "/mainModule"},
		{name: "worker with empty mainModule", m: w, edit: func(v map[string]any) { v["mainModule"] = "" }, rule: RuleRequired, pointer: "/mainModule"},
		{name: "worker without modules", m: w, edit: func(v map[string]any) { delete(v, "modules") }, rule: RuleRequired, pointer: "/modules"},
		{name: "module without size", m: w, edit: func(v map[string]any) { delete(entryOf(v, "modules", 1), "size") }, rule: RuleRequired, pointer: "/modules/1/size"},
		{name: "file without digest", m: s, edit: func(v map[string]any) { delete(entryOf(v, "files", 0), "digest") }, rule: RuleRequired, pointer: "/files/0/digest"},
		{name: "static without files", m: s, edit: func(v map[string]any) { delete(v, "files") }, rule: RuleRequired, pointer: "/files"},
		{name: "api version", m: w, edit: func(v map[string]any) { v["apiVersion"] = "artifacts.takoform.com/v1" }, rule: RuleAPIVersion, pointer: "/apiVersion"},
		{name: "kind", m: w, edit: func(v map[string]any) { v["kind"] = "Bundle" }, rule: RuleKind, pointer: "/kind"},
		{name: "worker with files", m: w, edit: func(v map[string]any) { v["files"] = doc2(t, s)["files"] }, rule: RuleKindExclusive, pointer: "/files"},
		{name: "worker with empty files", m: w, edit: func(v map[string]any) { v["files"] = []any{} }, rule: RuleKindExclusive, pointer: "/files"},
		{name: "static with mainModule", m: s, edit: func(v map[string]any) { v["mainModule"] = "index.html" }, rule: RuleKindExclusive, pointer: "/mainModule"},
		{name: "static with empty mainModule", m: s, edit: func(v map[string]any) { v["mainModule"] = "" }, rule: RuleKindExclusive, pointer: "/mainModule"},
		{name: "migration with modules", m: filesManifest(KindMigrationBundle), edit: func(v map[string]any) { v["modules"] = doc2(t, w)["modules"] }, rule: RuleKindExclusive, pointer: "/modules"},
		{name: "static with empty modules", m: s, edit: func(v map[string]any) { v["modules"] = []any{} }, rule: RuleKindExclusive, pointer: "/modules"},
		{name: "no modules", m: w, edit: func(v map[string]any) { v["modules"] = []any{} }, rule: RuleCount, pointer: "/modules"},
		{name: "no files", m: s, edit: func(v map[string]any) { v["files"] = []any{} }, rule: RuleCount, pointer: "/files"},
		{name: "main not listed", m: w, edit: func(v map[string]any) { v["mainModule"] = "other.js" }, rule: RuleMainModule, pointer: "/mainModule"},
		{name: "main auxiliary", m: w, edit: func(v map[string]any) { v["mainModule"] = "worker.js.map" }, rule: RuleMainModuleAuxiliary, pointer: "/mainModule"},
		{name: "main path", m: w, edit: func(v map[string]any) { v["mainModule"] = "./worker.js" }, rule: RulePath, pointer: "/mainModule"},
		{name: "module media type json", m: w, edit: set("modules", 2, "mediaType", "application/json"), rule: RuleMediaType, pointer: "/modules/2/mediaType"},
		{name: "module media type javascript", m: w, edit: set("modules", 0, "mediaType", "application/javascript"), rule: RuleMediaType, pointer: "/modules/0/mediaType"},
		{name: "file media type uppercase", m: s, edit: set("files", 1, "mediaType", "Text/HTML"), rule: RuleMediaType, pointer: "/files/1/mediaType"},
		{name: "file media type parameter", m: s, edit: set("files", 0, "mediaType", "text/html; charset=utf-8"), rule: RuleMediaType, pointer: "/files/0/mediaType"},
		{name: "file media type no subtype", m: s, edit: set("files", 0, "mediaType", "text"), rule: RuleMediaType, pointer: "/files/0/mediaType"},
		{name: "file media type too long", m: s, edit: set("files", 0, "mediaType", "text/"+strings.Repeat("x", 251)), rule: RuleMediaType, pointer: "/files/0/mediaType"},
		{name: "size negative", m: w, edit: set("modules", 1, "size", -1), rule: RuleSize, pointer: "/modules/1/size"},
		{name: "size too big", m: s, edit: set("files", 2, "size", MaxEntrySize+1), rule: RuleSize, pointer: "/files/2/size"},
		{name: "digest uppercase", m: w, edit: set("modules", 0, "digest", strings.ToUpper(digestA)), rule: RuleDigest, pointer: "/modules/0/digest"},
		{name: "digest short", m: s, edit: set("files", 0, "digest", "sha256:abc"), rule: RuleDigest, pointer: "/files/0/digest"},
		{name: "digest algorithm", m: s, edit: set("files", 0, "digest", "sha512:"+digestA[7:]), rule: RuleDigest, pointer: "/files/0/digest"},
		{name: "duplicate module", m: w, edit: set("modules", 2, "name", "worker.js"), rule: RuleDuplicate, pointer: "/modules/2/name"},
		{name: "duplicate file", m: s, edit: set("files", 2, "path", "index.html"), rule: RuleDuplicate, pointer: "/files/2/path"},
	}
	for _, p := range []struct{ name, path string }{
		{"empty", ""}, {"absolute", "/worker.js"}, {"backslash", `lib\a.js`}, {"dot-dot", "lib/../a.js"},
		{"dot", "./a.js"}, {"trailing dot segment", "lib/."}, {"hidden", ".env"}, {"empty segment", "lib//a.js"},
		{"trailing slash", "lib/"}, {"space", "a b.js"}, {"nul", "a\x00.js"}, {"non-ascii", "é.js"},
		{"too long", strings.Repeat("a", 241)},
	} {
		cases = append(cases,
			parseCase{name: "module path " + p.name, m: w, edit: set("modules", 1, "name", p.path), rule: RulePath, pointer: "/modules/1/name"},
			parseCase{name: "file path " + p.name, m: s, edit: set("files", 0, "path", p.path), rule: RulePath, pointer: "/files/0/path"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.raw)
			if c.m != nil {
				data = doc(t, c.m, c.edit)
			}
			m, err := ParseManifest(data)
			if m != nil {
				t.Fatalf("got a manifest for a refused document")
			}
			wantRule(t, err, c.rule, c.pointer)
		})
	}
}

func doc2(t *testing.T, m *wire.Manifest) map[string]any {
	var v map[string]any
	if err := json.Unmarshal(doc(t, m, nil), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyStructRules(t *testing.T) {
	many := func(n int) *wire.Manifest {
		m := workerManifest()
		m.Modules = m.Modules[:1]
		for i := 1; i < n; i++ {
			m.Modules = append(m.Modules, wire.ManifestModule{Name: "m" + strings.Repeat("x", i%7) + "/" + strconv.Itoa(i) + ".txt", MediaType: MediaTypeText, Size: 0, Digest: digestA})
		}
		return m
	}
	tooManyFiles := filesManifest(KindStaticAssetBundle)
	for i := 0; len(tooManyFiles.Files) <= MaxFiles; i++ {
		tooManyFiles.Files = append(tooManyFiles.Files, wire.ManifestFile{Path: "f/" + strconv.Itoa(i), MediaType: "text/plain", Digest: digestA})
	}
	badUTF8 := workerManifest()
	badUTF8.Modules[1].Name = "a\xff.js"
	cases := []struct {
		name          string
		m             *wire.Manifest
		lim           Limits
		rule, pointer string
	}{
		{"nil", nil, Limits{}, RuleRequired, ""},
		{"too many modules", many(MaxModules + 1), Limits{}, RuleCount, "/modules"},
		{"too many files", tooManyFiles, Limits{}, RuleCount, "/files"},
		{"invalid UTF-8 path", badUTF8, Limits{}, RulePath, "/modules/1/name"},
		{"host entry limit", workerManifest(), Limits{MaxEntries: 2}, RuleLimit, "/modules"},
		{"host byte limit", filesManifest(KindMigrationBundle), Limits{MaximumBundleBytes: 2}, RuleLimit, "/files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantRule(t, Verify(c.m, c.lim), c.rule, c.pointer) })
	}
	if err := Verify(many(MaxModules), Limits{}); err != nil {
		t.Fatalf("4096 modules: %v", err)
	}
}

func TestDuplicateDigestsAllowed(t *testing.T) {
	m := workerManifest() // worker.js.map and lib/data.bin share digestB
	if m.Modules[1].Digest != m.Modules[2].Digest {
		t.Fatal("fixture lost its shared digest")
	}
	if err := Verify(m, Limits{}); err != nil {
		t.Fatalf("same bytes under two names: %v", err)
	}
}

func TestDigestIsDigestValue(t *testing.T) {
	m := workerManifest()
	d, err := Digest(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ijson.DigestValue(m)
	if err != nil || d != want || !ijson.ValidDigest(d) {
		t.Fatalf("Digest %s, DigestValue %s (%v)", d, want, err)
	}
	m.Modules[0].Size = 2
	if d2, _ := Digest(m); d2 == d {
		t.Fatal("digest did not change with the manifest")
	}
	if _, err := Digest(nil); err == nil {
		t.Fatal("Digest(nil) succeeded")
	}
}

// Lane v1beta1's MigrationBundle rule (spec/lane-v1beta1.md §3.6): with
// Limits.SQLMigrationFiles every file is exactly application/sql; without
// it (lane v1alpha3) any media type of the grammar passes, and the rule
// never touches a StaticAssetBundle.
func TestSQLMigrationFiles(t *testing.T) {
	strict := Limits{SQLMigrationFiles: true}
	m := filesManifest(KindMigrationBundle)
	if err := Verify(m, Limits{}); err != nil {
		t.Fatalf("lane v1alpha3 refuses a MigrationBundle of %s files: %v", m.Files[0].MediaType, err)
	}
	wantRule(t, Verify(m, strict), RuleMigrationMediaType, "/files/0/mediaType")
	for i := range m.Files {
		m.Files[i].MediaType = MediaTypeSQL
	}
	if err := Verify(m, strict); err != nil {
		t.Fatalf("all application/sql: %v", err)
	}
	m.Files[2].MediaType = "application/sql+x"
	wantRule(t, Verify(m, strict), RuleMigrationMediaType, "/files/2/mediaType")
	if err := Verify(filesManifest(KindStaticAssetBundle), strict); err != nil {
		t.Fatalf("the rule reached a StaticAssetBundle: %v", err)
	}
	if MaximumBundleFiles(KindWorkerBundle) != 4096 || MaximumBundleFiles(KindStaticAssetBundle) != 16384 || MaximumBundleFiles(KindMigrationBundle) != 16384 {
		t.Fatal("MaximumBundleFiles is not the schema's maxItems")
	}
	if !HasFile(filesManifest(KindStaticAssetBundle), "index.html") || HasFile(filesManifest(KindStaticAssetBundle), "Index.html") {
		t.Fatal("HasFile does not match paths exactly")
	}
}
