package form_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/testref"
)

// Digests spec/host-api-v1alpha3.md Appendix B pins.
var appendixB = map[string]string{
	"ModuleWorker":       "sha256:cea859e4a2c295dea985e0b26bbc70309d296e210b805facf4b5592e5f635616",
	"WorkerBundle":       "sha256:d7fd1bfc966a90b9f15ebfc6530c2465ee19b14fed3fef91c72502e799539f74",
	"WorkerVersion":      "sha256:5304e2c173b4fc55c72ca6926738025c45bc4c6a3b9ac175b8f592047d7011af",
	"WorkerDeployment":   "sha256:4472ad0d06fd81036cf8fb709febbbb94e15fd113f7dd5509de2eeda6e441d46",
	"WorkerCustomDomain": "sha256:f97338e6eea8c41f81516f653d9e8e8b6bd4a83f5c81d6216493c08fabdabee0",
	"WorkerEndpoint":     "sha256:ba7ae77f85faa46a7dbbe14651ccdb938e6f20e77216bbabd0ef450044c1c68f",
}

func loadReference(t *testing.T) (string, *form.Family) {
	dir := testref.Dir(t)
	fam, findings := form.LoadFamily(os.DirFS(dir))
	for _, f := range findings {
		t.Errorf("reference family: %s", f)
	}
	return dir, fam
}

func TestReferenceDigestsReproduce(t *testing.T) {
	dir, fam := loadReference(t)
	byKind := map[string]form.FormRef{}
	for _, f := range fam.Forms {
		byKind[f.Definition.Ref().Kind] = f.Definition.Ref()
	}
	if len(byKind) != 12 {
		t.Fatalf("reference family has %d Forms, want 12", len(byKind))
	}
	for kind, want := range appendixB {
		if got := byKind[kind].SchemaDigest; got != want {
			t.Errorf("%s digest = %s, Appendix B pins %s", kind, got, want)
		}
	}
	var forms struct {
		Forms []struct {
			Path    string       `json:"path"`
			FormRef form.FormRef `json:"formRef"`
		} `json:"forms"`
	}
	readJSON(t, filepath.Join(dir, "forms/candidates/edge/v1alpha1/candidate-set.json"), &forms)
	if len(forms.Forms) != 12 {
		t.Fatalf("candidate set lists %d forms", len(forms.Forms))
	}
	for _, f := range forms.Forms {
		if got := byKind[f.FormRef.Kind]; got != f.FormRef {
			t.Errorf("%s: computed %v, candidate set pins %v", f.Path, got, f.FormRef)
		}
	}
	type contract struct {
		Name, Version, SchemaDigest string
	}
	var ifaces struct{ Interfaces []contract }
	var binds struct{ Bindings []contract }
	readJSON(t, filepath.Join(dir, "interfaces/candidates/v1alpha1/candidate-set.json"), &ifaces)
	readJSON(t, filepath.Join(dir, "bindings/candidates/v1alpha1/candidate-set.json"), &binds)
	gotI := map[string]string{}
	for _, i := range fam.Interfaces {
		gotI[i.Definition.Ref().Name+"@"+i.Definition.Ref().Version] = i.Definition.Ref().SchemaDigest
	}
	gotB := map[string]string{}
	for _, b := range fam.Bindings {
		gotB[b.Definition.Ref().Name+"@"+b.Definition.Ref().Version] = b.Definition.Ref().SchemaDigest
	}
	if len(ifaces.Interfaces) != 6 || len(binds.Bindings) != 5 {
		t.Fatalf("candidate sets list %d interfaces and %d bindings, want 6 and 5", len(ifaces.Interfaces), len(binds.Bindings))
	}
	for _, c := range ifaces.Interfaces {
		if gotI[c.Name+"@"+c.Version] != c.SchemaDigest {
			t.Errorf("interface %s@%s: computed %s, pinned %s", c.Name, c.Version, gotI[c.Name+"@"+c.Version], c.SchemaDigest)
		}
	}
	for _, c := range binds.Bindings {
		if gotB[c.Name+"@"+c.Version] != c.SchemaDigest {
			t.Errorf("binding %s@%s: computed %s, pinned %s", c.Name, c.Version, gotB[c.Name+"@"+c.Version], c.SchemaDigest)
		}
	}
}

func TestReferenceFixturesAndCrossReferences(t *testing.T) {
	dir, fam := loadReference(t)
	fsys := os.DirFS(dir)
	for _, f := range fam.CheckFixtures(fsys) {
		t.Errorf("fixture: %s", f)
	}
	for _, f := range fam.CheckReferences() {
		t.Errorf("cross reference: %s", f)
	}
	negatives := 0
	for _, f := range fam.Forms {
		negatives += len(f.Definition.NegativeFixtures())
	}
	if negatives < 40 {
		t.Fatalf("only %d negative fixtures were checked", negatives)
	}
}

func TestReferenceRelationsDerived(t *testing.T) {
	_, fam := loadReference(t)
	var got []string
	exact := 0
	for _, f := range fam.Forms {
		for _, r := range f.Definition.Relations() {
			got = append(got, f.Definition.Ref().Kind+" "+r.Pointer+" -> "+r.Kind+" "+r.Binding)
			if len(r.TargetFormRefs) > 0 {
				exact++
			}
		}
	}
	sort.Strings(got)
	want := []string{
		"QueueConsumer /deadLetterQueue -> AtLeastOnceQueue ",
		"QueueConsumer /queue -> AtLeastOnceQueue ",
		"QueueConsumer /worker -> ModuleWorker ",
		"WorkerCronTrigger /worker -> ModuleWorker ",
		"WorkerCustomDomain /worker -> ModuleWorker ",
		"WorkerDeployment /versions/*/workerVersion -> WorkerVersion ",
		"WorkerDeployment /worker -> ModuleWorker ",
		"WorkerEndpoint /worker -> ModuleWorker ",
		"WorkerVersion /bucketBindings/*/resource -> ObjectBucket module-worker.object-bucket",
		"WorkerVersion /bundle -> WorkerBundle ",
		"WorkerVersion /kvBindings/*/resource -> EdgeKVNamespace module-worker.edge-kv",
		"WorkerVersion /queueProducerBindings/*/resource -> AtLeastOnceQueue module-worker.queue-producer",
		"WorkerVersion /serviceBindings/*/resource -> ModuleWorker module-worker.service",
		"WorkerVersion /sqliteBindings/*/resource -> SQLiteDatabase module-worker.sqlite",
		"WorkerVersion /worker -> ModuleWorker ",
	}
	if len(got) != len(want) {
		t.Fatalf("derived %d relations, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("relation %d = %q, want %q", i, got[i], want[i])
		}
	}
	if exact != 3 {
		t.Errorf("%d exact-Form relations, want 3 (WorkerVersion /bundle, WorkerDeployment /worker and /versions/*/workerVersion)", exact)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestDesiredSchemaKeepsTheDocumentsBytes(t *testing.T) {
	dir := testref.Dir(t)
	data, err := os.ReadFile(filepath.Join(dir, "forms/candidates/edge/v1alpha1/worker-version/definition.json"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := form.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	raw := def.DesiredSchemaJSON()
	if len(raw) < 1000 || !bytes.Contains(data, raw) || raw[0] != '{' || raw[len(raw)-1] != '}' {
		t.Fatalf("DesiredSchemaJSON is not the member's exact bytes from the file (%d bytes)", len(raw))
	}
}
