package edge

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/takoform/takoform/form"
)

// wantClasses is the table of spec/lane-v1beta1.md §6.3: each v1beta1 Form
// against its v1alpha1 counterpart.
var wantClasses = map[string]form.FormClass{
	"ModuleWorker 0.1.0":               form.ClassSameFields,
	"WorkerBundle 0.1.0":               form.ClassEquivalent,
	"StaticAssetBundle 0.1.0":          form.ClassNew,
	"WorkerVersion 0.1.0":              form.ClassAdditive,
	"WorkerDeployment 0.1.0":           form.ClassSameFields,
	"WorkerCustomDomain 0.1.0":         form.ClassSameFields,
	"WorkerEndpoint 0.1.0":             form.ClassSameFields,
	"WorkerCronTrigger 0.1.0":          form.ClassSameFields,
	"EdgeKVNamespace 0.1.0":            form.ClassSameFields,
	"ObjectBucket 0.1.0":               form.ClassSameFields,
	"SQLiteDatabase 0.1.0":             form.ClassSameFields,
	"SQLiteMigrationSet 0.1.0":         form.ClassNew,
	"SQLiteMigrationApplication 0.1.0": form.ClassNew,
	"AtLeastOnceQueue 0.1.0":           form.ClassSameFields,
	"QueueConsumer 0.1.0":              form.ClassSameFields,
}

var betaToAlpha = map[string]string{GroupV1beta1: GroupV1alpha1}

func loadFamily(t *testing.T, name string, fsys fs.FS) *form.Family {
	t.Helper()
	fam, findings := form.LoadFamily(fsys)
	if len(findings) > 0 {
		t.Fatalf("%s: %s", name, findings[0])
	}
	return fam
}

// TestOurV1beta1Classes: our two editions relate exactly as spec/lane-v1beta1.md §6.3 says the
// public families do — one Form equivalent (WorkerBundle, the only one
// whose codec may be shared across the groups), one additive, three new,
// ten with other contracts.
func TestOurV1beta1Classes(t *testing.T) {
	got := form.Classify(loadFamily(t, "v1alpha1", Family()), loadFamily(t, "v1beta1", FamilyV1beta1()), betaToAlpha)
	if !reflect.DeepEqual(got, wantClasses) {
		t.Errorf("classes of our v1beta1 Forms:\n got %v\nwant %v", got, wantClasses)
	}
	// Without the group mapping nothing is a counterpart: the two families
	// never relate to each other.
	for kind, c := range form.Classify(loadFamily(t, "v1alpha1", Family()), loadFamily(t, "v1beta1", FamilyV1beta1()), nil) {
		if c != form.ClassNew {
			t.Errorf("%s: class %s without the group mapping", kind, c)
		}
	}
}

// refFamily loads a public family from the reference data beside the
// clone, or skips.
func refFamily(t *testing.T, set string) *form.Family {
	t.Helper()
	root := filepath.Join("..", "..", "..", "shared", "reference", set)
	if _, err := os.Stat(root); err != nil {
		t.Skipf("reference data %s is absent; the public families' classes are not checked", root)
	}
	return loadFamily(t, set, os.DirFS(root))
}

// TestPublicV1beta1Classes: the table of spec/lane-v1beta1.md §6.3 is what
// the public documents say, and our v1beta1 edition is, document by
// document, the public one in our words (repo decision 0016): all 26
// documents equivalent.
func TestPublicV1beta1Classes(t *testing.T) {
	alpha, beta := refFamily(t, "takoform-v1alpha3"), refFamily(t, "takoform-v1beta1")
	if got := form.Classify(alpha, beta, betaToAlpha); !reflect.DeepEqual(got, wantClasses) {
		t.Errorf("classes of the public v1beta1 Forms:\n got %v\nwant %v", got, wantClasses)
	}
	eqs := form.Equivalences(loadFamily(t, "ours", FamilyV1beta1()), beta)
	if len(eqs) != 26 {
		t.Errorf("%d of our 26 v1beta1 documents are equivalent to the public ones: %v", len(eqs), eqs)
	}
	// And across the lanes our v1alpha1 edition is the public v1alpha1 one,
	// never the public v1beta1 one.
	if eqs := form.Equivalences(loadFamily(t, "ours", Family()), beta); len(eqs) != 1 || eqs[0].Identity != "worker.service@1.0.0" {
		t.Errorf("our v1alpha1 documents equivalent to public v1beta1 ones: %v (want only worker.service, unchanged)", eqs)
	}
}
