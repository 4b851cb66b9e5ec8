package provider_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/takoform/takoform/internal/testref"
)

type baselineAttr struct {
	Type      string `json:"type"`
	Required  bool   `json:"required"`
	Optional  bool   `json:"optional"`
	Computed  bool   `json:"computed"`
	Sensitive bool   `json:"sensitive"`
}

// TestReferenceSurfaceFloor holds the 12 Edge types to the public
// provider's v1alpha3 surface as a FLOOR: every type and attribute there
// exists here with the same type and flags, and the same schema version;
// additions pass.
func TestReferenceSurfaceFloor(t *testing.T) {
	dir := testref.Dir(t)
	data, err := os.ReadFile(filepath.Join(dir, "terraform-surface-baseline-v1alpha3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]struct {
		Version    int64                   `json:"version"`
		Attributes map[string]baselineAttr `json:"attributes"`
	}
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	reg := edgeRegistry(t)
	if len(base) != 12 {
		t.Fatalf("the baseline lists %d types", len(base))
	}
	for typeName, bt := range base {
		ts, ok := reg.Types[typeName]
		if !ok {
			t.Errorf("type %s is missing", typeName)
			continue
		}
		if ts.Schema.Version != bt.Version {
			t.Errorf("%s: schema version %d, baseline %d", typeName, ts.Schema.Version, bt.Version)
		}
		for name, ba := range bt.Attributes {
			a, ok := ts.Schema.Attributes[name]
			if !ok {
				t.Errorf("%s.%s is missing", typeName, name)
				continue
			}
			got := baselineAttr{Type: a.GetType().String(), Required: a.IsRequired(), Optional: a.IsOptional(), Computed: a.IsComputed(), Sensitive: a.IsSensitive()}
			if got != ba {
				t.Errorf("%s.%s = %+v, baseline %+v", typeName, name, got, ba)
			}
		}
	}
}
