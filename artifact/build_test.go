package artifact

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/takoform/takoform/ijson"
)

func TestBuildDeterministic(t *testing.T) {
	src := []byte("export default { fetch() { return new Response('ok') } }")
	files := []ModuleFile{
		{Name: "worker.js", Data: src},
		{Name: "worker.js.map", Data: []byte(`{"version":3}`)},
		{Name: "lib/a.wasm", Data: []byte{0, 'a', 's', 'm'}},
		{Name: "data/copy.bin", MediaType: MediaTypeOctetStream, Data: []byte{0, 'a', 's', 'm'}},
		{Name: "README", MediaType: MediaTypeText, Data: nil},
	}
	reversed := make([]ModuleFile, len(files))
	for i, f := range files {
		reversed[len(files)-1-i] = f
	}
	m1, blobs1, err := Build("worker.js", files)
	if err != nil {
		t.Fatal(err)
	}
	m2, blobs2, err := Build("worker.js", reversed)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(blobs1, blobs2) {
		t.Fatalf("input order changed the result:\n%+v\n%+v", m1, m2)
	}
	d1, _ := Digest(m1)
	d2, _ := Digest(m2)
	if d1 != d2 {
		t.Fatalf("manifest digests differ: %s %s", d1, d2)
	}
	if files[0].Name != "worker.js" {
		t.Fatal("Build reordered its input")
	}

	wantNames := []string{"README", "data/copy.bin", "lib/a.wasm", "worker.js", "worker.js.map"}
	wantTypes := []string{MediaTypeText, MediaTypeOctetStream, MediaTypeWasm, MediaTypeJavaScriptModule, MediaTypeSourceMap}
	for i, mod := range m1.Modules {
		if mod.Name != wantNames[i] || mod.MediaType != wantTypes[i] {
			t.Fatalf("module %d = %s %s, want %s %s", i, mod.Name, mod.MediaType, wantNames[i], wantTypes[i])
		}
		data, ok := blobs1[mod.Digest]
		if !ok || int64(len(data)) != mod.Size || ijson.SumDigest(data) != mod.Digest {
			t.Fatalf("module %s: blob missing or inconsistent", mod.Name)
		}
		if err := VerifyBlob(mod.Digest, mod.Size, data); err != nil {
			t.Fatal(err)
		}
	}
	if len(blobs1) != 4 { // the .wasm and the .bin share bytes
		t.Fatalf("got %d blobs, want 4", len(blobs1))
	}
	if !bytes.Equal(blobs1[m1.Modules[3].Digest], src) {
		t.Fatal("blob for worker.js is not its source")
	}
}

func TestBuildRefusals(t *testing.T) {
	js := []byte("export default {}")
	cases := []struct {
		name          string
		main          string
		files         []ModuleFile
		rule, pointer string
	}{
		{"no modules", "worker.js", nil, RuleCount, "/modules"},
		{"no main", "", []ModuleFile{{Name: "worker.js", Data: js}}, RuleRequired, "/mainModule"},
		{"main not listed", "index.js", []ModuleFile{{Name: "worker.js", Data: js}}, RuleMainModule, "/mainModule"},
		{"main auxiliary", "worker.js.map", []ModuleFile{{Name: "worker.js", Data: js}, {Name: "worker.js.map", Data: js}}, RuleMainModuleAuxiliary, "/mainModule"},
		{"unknown extension", "worker.js", []ModuleFile{{Name: "worker.js", Data: js}, {Name: "data.json", Data: js}}, RuleMediaType, "/modules/0/mediaType"},
		{"json media type", "worker.js", []ModuleFile{{Name: "worker.js", Data: js}, {Name: "data.json", MediaType: "application/json", Data: js}}, RuleMediaType, "/modules/0/mediaType"},
		{"duplicate name", "worker.js", []ModuleFile{{Name: "worker.js", Data: js}, {Name: "worker.js", Data: nil}}, RuleDuplicate, "/modules/1/name"},
		{"bad path", "worker.js", []ModuleFile{{Name: "worker.js", Data: js}, {Name: "../x.js", Data: js}}, RulePath, "/modules/0/name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, blobs, err := Build(c.main, c.files)
			if m != nil || blobs != nil {
				t.Fatal("got results with an error")
			}
			wantRule(t, err, c.rule, c.pointer)
		})
	}
}

func TestMediaTypeForName(t *testing.T) {
	for name, want := range map[string]string{
		"a.js": MediaTypeJavaScriptModule, "lib/b.mjs": MediaTypeJavaScriptModule, "A.JS": MediaTypeJavaScriptModule,
		"m.wasm": MediaTypeWasm, "a.js.map": MediaTypeSourceMap, "n.txt": MediaTypeText, "d.bin": MediaTypeOctetStream,
		"data.json": "", "Makefile": "", "a.cjs": "", "dir.js/file": "",
	} {
		got, ok := MediaTypeForName(name)
		if got != want || ok != (want != "") {
			t.Errorf("MediaTypeForName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestVerifyBlob(t *testing.T) {
	data := []byte("hello")
	d := ijson.SumDigest(data)
	if err := VerifyBlob(d, 5, data); err != nil {
		t.Fatal(err)
	}
	wantRule(t, VerifyBlob(d, 6, data), RuleBlobSize, "")
	wantRule(t, VerifyBlob(d, 5, []byte("world")), RuleBlobDigest, "")
	wantRule(t, VerifyBlob("sha256:xyz", 5, data), RuleDigest, "")
	if err := VerifyBlob(ijson.SumDigest(nil), 0, nil); err != nil {
		t.Fatalf("empty blob: %v", err)
	}
}
