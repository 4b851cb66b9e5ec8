package engine

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/runtime/projection"
)

// TestEveryProjectionIsSupplied: each kind of the one table Projections
// names a module that package projection supplies and a factory that
// module exports, so the generated entry's import resolves in workerd.
func TestEveryProjectionIsSupplied(t *testing.T) {
	mods := projection.Modules()
	for kind, p := range Projections {
		src, ok := mods[p.Module]
		if !ok {
			t.Errorf("kind %s: module %s is not among projection.Modules()", kind, p.Module)
			continue
		}
		if !strings.Contains(src, "export function "+p.Factory+"(") {
			t.Errorf("kind %s: module %s does not export function %s", kind, p.Module, p.Factory)
		}
	}
}

// TestConfigCarriesWhatProjectionsImport: a version with a gateway
// binding carries every module its projection imports by relative name
// (./common.js …), else workerd refuses the whole shard at load.
func TestConfigCarriesWhatProjectionsImport(t *testing.T) {
	mods := projection.Modules()
	dir := t.TempDir()
	path, err := WriteConfig(Shard{Dir: dir, Health: dir + "/h.sock", Gateway: dir + "/gw.sock", Projections: mods,
		Versions: []Version{{UID: "v", MainModule: "index.js", Socket: dir + "/v.sock",
			Modules:  []Module{{Name: "index.js", MediaType: "application/javascript+module", Data: []byte("export default { fetch() { return new Response(\"\"); } };\n")}},
			Bindings: []Binding{{Name: "CACHE", Kind: KindKV, UID: "kv-uid"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	imported := regexp.MustCompile(`from "\./([^"]+)"`)
	for _, m := range imported.FindAllStringSubmatch(mods[Projections[KindKV].Module], -1) {
		if name := projection.Prefix + m[1]; !strings.Contains(string(config), `name = "`+name+`"`) {
			t.Errorf("the kv projection imports %s, which the version's module list lacks", name)
		}
	}
}
