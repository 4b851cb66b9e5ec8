package host_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/internal/testref"
	"github.com/takoform/takoform/wire"
)

func dirFS(dir string) fs.FS { return os.DirFS(dir) }

// TestFamiliesCollideByIdentityLine: the built-in family and the public
// family define the same group, kinds and definition versions; installing
// both is refused naming both files of a colliding pair, and the repair
// it names (one built-in edition) installs.
func TestFamiliesCollideByIdentityLine(t *testing.T) {
	ref := testref.Dir(t)
	_, _, err := host.LoadFamilies(host.FamilySources([]string{host.BuiltinFamily, ref}, dirFS))
	if err == nil {
		t.Fatal("the built-in and the public family were both installed")
	}
	want := filepath.Join(ref, "forms/candidates/edge/v1alpha1/sqlite-database/definition.json") + ": form edge.forms.takoform.com/v1alpha1 SQLiteDatabase 0.1.0 is also defined by builtin/"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("the refusal does not name both files (%q):\n%v", want, err)
	}
	// The repair it states is true: one built-in edition installs beside
	// the public family of the other group.
	repair := "(--forms builtin installs both shipped editions; --forms builtin/v1alpha1 or --forms builtin/v1beta1 installs only that one)"
	if !strings.Contains(err.Error(), repair) {
		t.Fatalf("the refusal does not say how to keep the other edition (%q):\n%v", repair, err)
	}
	cat, lanes, err := host.LoadFamilies(host.FamilySources([]string{host.BuiltinV1beta1, ref}, dirFS))
	if err != nil {
		t.Fatalf("the repair: %v", err)
	}
	if lanes[wire.V1alpha3.Name].Len() != 12 || lanes[wire.V1beta1.Name].Len() != 15 || cat.Len() != 27 {
		t.Fatalf("builtin/v1beta1 beside the public v1alpha1 family: %d forms, lanes %d and %d", cat.Len(), lanes[wire.V1alpha3.Name].Len(), lanes[wire.V1beta1.Name].Len())
	}
	// The same document twice is refused too: one document per line and version.
	dup := fstest.MapFS{"a/definition.json": {Data: []byte(kvDoc)}, "b/definition.json": {Data: []byte(kvDoc)}}
	_, _, err = host.LoadFamilies([]host.FamilySource{{Name: "dup", FS: dup}})
	if err == nil || !strings.Contains(err.Error(), "dup/b/definition.json: form forms.example.com/v1alpha1 EdgeKVNamespace 1.0.0 is also defined by dup/a/definition.json") {
		t.Fatalf("a repeated document: %v", err)
	}
}

const kvDoc = `{"apiVersion":"forms.example.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"1.0.0","title":"x","role":"identity",` +
	`"desiredSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{}},` +
	`"lifecycleCapabilities":["create","read","delete","import","observe"]}`

// TestBuiltinBesideAnotherGroup: the built-in family installs beside a
// family of another group.
func TestBuiltinBesideAnotherGroup(t *testing.T) {
	other := fstest.MapFS{"kv/definition.json": {Data: []byte(kvDoc)}}
	cat, _, err := host.LoadFamilies(append(host.FamilySources([]string{host.BuiltinFamily}, dirFS), host.FamilySource{Name: "other", FS: other}))
	if err != nil {
		t.Fatal(err)
	}
	builtin, _, err := host.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != builtin.Len()+1 || len(cat.Versions("forms.example.com/v1alpha1", "EdgeKVNamespace")) != 1 {
		t.Fatalf("%d forms installed, want the %d built-in ones plus one", cat.Len(), builtin.Len())
	}
}

// TestPublicFamilyServesPackageDigests: the public family plus the
// conformance corpus install together, and every Form of the candidate
// set is served with the packageDigest it declares.
func TestPublicFamilyServesPackageDigests(t *testing.T) {
	ref, extra := testref.Dir(t), testref.ConformanceDir(t)
	cat, _, err := host.LoadFamilies(host.FamilySources([]string{ref, extra}, dirFS))
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != 13 {
		t.Fatalf("%d forms, want the 12 public ones and ModuleWorker 0.2.0", cat.Len())
	}
	want := map[string]string{}
	data, err := os.ReadFile(filepath.Join(ref, "forms/candidates/edge/v1alpha1", host.CandidateSetFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, `"packageDigest": "`); i >= 0 {
			want[strings.TrimSuffix(line[i+len(`"packageDigest": "`):], `"`)] = ""
		}
	}
	if len(want) != 12 {
		t.Fatalf("the candidate set lists %d package digests", len(want))
	}
	h := hosttest.Start(t, hosttest.Options{Catalog: cat})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, in := range cat.Forms() {
		r := in.Definition.Ref()
		avail, err := c.Forms(context.Background(), "pkg", r)
		if err != nil || len(avail.Forms) != 1 {
			t.Fatalf("%s: %v", r, err)
		}
		got := avail.Forms[0].Identity.PackageDigest
		switch _, declared := want[got]; {
		case r.DefinitionVersion == "0.2.0" && got != "":
			t.Errorf("%s: served packageDigest %s, but no candidate set declares one", r, got)
		case r.DefinitionVersion == "0.1.0" && !declared:
			t.Errorf("%s: served packageDigest %q, not the candidate set's", r, got)
		case declared:
			served++
		}
	}
	if served != 12 {
		t.Fatalf("%d Forms served their declared packageDigest, want 12", served)
	}
}

// TestCandidateSetNamingAnUninstalledForm is refused naming the set.
func TestCandidateSetNamingAnUninstalledForm(t *testing.T) {
	bad := fstest.MapFS{
		"kv/definition.json": {Data: []byte(kvDoc)},
		"candidate-set.json": {Data: []byte(`{"forms":[{"formRef":{"apiVersion":"forms.example.com/v1alpha1","kind":"EdgeKVNamespace","definitionVersion":"1.0.0","schemaDigest":"sha256:` + strings.Repeat("0", 64) + `"},"packageDigest":"sha256:` + strings.Repeat("1", 64) + `"}]}`)},
	}
	_, _, err := host.LoadFamilies([]host.FamilySource{{Name: "bad", FS: bad}})
	if err == nil || !strings.Contains(err.Error(), "bad/candidate-set.json: lists forms.example.com/v1alpha1 EdgeKVNamespace 1.0.0") {
		t.Fatalf("got %v", err)
	}
}

// TestSecondGroupFormOnlyInProbeMode: the probe's second-group Form is
// served under its declared ref by a probe host, and by no other.
func TestSecondGroupFormOnlyInProbeMode(t *testing.T) {
	for _, probe := range []bool{true, false} {
		h := hosttest.Start(t, hosttest.Options{Probe: probe})
		c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
		if err != nil {
			t.Fatal(err)
		}
		avail, err := c.Forms(context.Background(), "probe", host.ProbeSecondGroupRef)
		var we *wire.Error
		switch {
		case probe && (err != nil || len(avail.Forms) != 1 || avail.Forms[0].Identity.FormRef != host.ProbeSecondGroupRef):
			t.Fatalf("a probe host does not serve the second-group form: %+v, %v", avail, err)
		case !probe && !(errors.As(err, &we) && we.Code == wire.FormUnknown):
			t.Fatalf("a host without the probe answered the second-group form: %+v, %v", avail, err)
		}
	}
}
