package form_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/internal/testref"
)

// copyFS copies every definition.json of dir into a MapFS, rewriting one
// file with edit (nil: none).
func copyFS(t *testing.T, dir fs.FS, file string, edit func(string) string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(dir, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != form.DefinitionFile {
			return err
		}
		b, err := fs.ReadFile(dir, p)
		if err != nil {
			return err
		}
		if p == file && edit != nil {
			s := edit(string(b))
			if s == string(b) {
				t.Fatalf("the edit of %s changed nothing", p)
			}
			b = []byte(s)
		}
		out[p] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func load(t *testing.T, fsys fs.FS) *form.Family {
	t.Helper()
	fam, findings := form.LoadFamily(fsys)
	if len(findings) > 0 {
		t.Fatalf("%v", findings)
	}
	return fam
}

func identities(eqs []form.Equivalence) map[string]bool {
	out := map[string]bool{}
	for _, e := range eqs {
		out[e.Doc+" "+e.Identity] = true
	}
	return out
}

// TestEveryEdgeDocumentIsEquivalentToThePublicOne: with prose masked and
// digests mapped, all 23 documents of our family are the public ones.
func TestEveryEdgeDocumentIsEquivalentToThePublicOne(t *testing.T) {
	pub := load(t, os.DirFS(testref.Dir(t)))
	eqs := form.Equivalences(load(t, edge.Family()), pub)
	if len(eqs) != 23 {
		t.Fatalf("%d equivalent documents, want 12 Forms, 6 Interfaces and 5 Bindings: %v", len(eqs), eqs)
	}
	for _, e := range eqs {
		if e.Ours == e.Theirs {
			t.Errorf("%s %s: the same digest on both sides; our wording should differ", e.Doc, e.Identity)
		}
	}
}

// TestProseIsMaskedStructureIsNot: a changed description keeps a document
// equivalent; a changed bound does not, and neither does any document
// naming it, even when the other family names its new digest everywhere
// (equivalence is family-wide: a digest must map through the table).
func TestProseIsMaskedStructureIsNot(t *testing.T) {
	dir := os.DirFS(testref.Dir(t))
	ours := load(t, edge.Family())
	cron := "forms/candidates/edge/v1alpha1/worker-cron-trigger/definition.json"
	prose := load(t, copyFS(t, dir, cron, func(s string) string {
		return strings.Replace(s, `"title": "Worker Cron Trigger"`, `"title": "Another wording"`, 1)
	}))
	if got := identities(form.Equivalences(ours, prose)); len(got) != 23 {
		t.Fatalf("a title change broke equivalence: %v", got)
	}

	kv := "interfaces/candidates/v1alpha1/edge.kv/definition.json"
	bound := copyFS(t, dir, kv, func(s string) string {
		return strings.Replace(s, `"maximum": 315360000`, `"maximum": 315360001`, 1)
	})
	was, err := fs.ReadFile(dir, kv)
	if err != nil {
		t.Fatal(err)
	}
	oldDigest, err := ijson.Digest(was)
	if err != nil {
		t.Fatal(err)
	}
	newDigest, err := ijson.Digest(bound[kv].Data)
	if err != nil {
		t.Fatal(err)
	}
	for p, f := range bound {
		f.Data = []byte(strings.ReplaceAll(string(f.Data), oldDigest, newDigest))
		bound[p] = f
	}
	got := identities(form.Equivalences(ours, load(t, bound)))
	for _, gone := range []string{"interface edge.kv@1.0.0", "binding module-worker.edge-kv@1.0.0",
		"form edge.forms.takoform.com/v1alpha1 EdgeKVNamespace 0.1.0", "form edge.forms.takoform.com/v1alpha1 WorkerVersion 0.1.0",
		"form edge.forms.takoform.com/v1alpha1 WorkerDeployment 0.1.0"} { // it names WorkerVersion
		if got[gone] {
			t.Errorf("%s is still equivalent after edge.kv's structure changed", gone)
		}
	}
	if !got["form edge.forms.takoform.com/v1alpha1 SQLiteDatabase 0.1.0"] || len(got) != 18 {
		t.Errorf("want the 18 documents that name nothing of edge.kv, directly or through another, still equivalent: %v", got)
	}
}
