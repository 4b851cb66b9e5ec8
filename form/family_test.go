package form_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
)

// TestLoadFamilyDigested: a definition the map lists takes the recorded
// digest, one it does not list is digested from its bytes, and a document
// the I-JSON check refuses gets that check's finding.
func TestLoadFamilyDigested(t *testing.T) {
	a := encode(widget())
	other := widget()
	other["kind"] = "Gadget"
	b := encode(other)
	fsys := fstest.MapFS{
		"a/definition.json":   {Data: a},
		"b/definition.json":   {Data: b},
		"bad/definition.json": {Data: []byte(`{"kind": "Widget", "kind": "Widget"}`)},
	}
	recorded := "sha256:ab" + strings.Repeat("0", 62)
	fam, findings := form.LoadFamilyDigested(fsys, map[string]string{"a/definition.json": recorded})
	_, checkErr := ijson.Decode(fsys["bad/definition.json"].Data)
	je, ok := checkErr.(*ijson.Error)
	if !ok {
		t.Fatalf("the duplicate member is not refused by the I-JSON check: %v", checkErr)
	}
	if len(findings) != 1 || findings[0] != (form.Finding{File: "bad/definition.json", Pointer: je.Pointer, Message: je.Detail}) {
		t.Fatalf("findings %v; want the I-JSON check's %v for bad/definition.json", findings, je)
	}
	if len(fam.Forms) != 2 {
		t.Fatalf("%d forms, want 2", len(fam.Forms))
	}
	want, _ := ijson.Digest(b)
	for _, f := range fam.Forms {
		got := f.Definition.Ref().SchemaDigest
		switch f.Path {
		case "a/definition.json":
			if got != recorded {
				t.Errorf("a: digest %s, want the recorded %s", got, recorded)
			}
		case "b/definition.json":
			if got != want {
				t.Errorf("b: digest %s, want its computed %s", got, want)
			}
		}
	}
}
