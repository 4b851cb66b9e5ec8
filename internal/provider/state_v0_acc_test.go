package provider_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestAccStateWrittenAtVersion0 hands a real OpenTofu the committed state
// file testdata/state/v0.tfstate — written at schema version 0: an Edge
// KV namespace in the frozen prior/v0.json layout, and a Gizmo in the
// test layout 0 (its finish under surface_finish) — as the working
// directory's local state, with only the host-minted UIDs filled in. Under the current
// build (Edge types at version 1, takoform_gizmo at the test-only version
// 2) both refresh through their upgraders (0→1, and 0→1→2 with the
// rename) and plan empty; the state is then written at the current
// versions.
func TestAccStateWrittenAtVersion0(t *testing.T) {
	cat := gizmoCatalog(t)
	h := accHost(t, hosttest.Options{Catalog: cat})
	reg := gizmoLayoutRegistry(t)
	base, statePath := t.TempDir(), ""
	cfg := providerBlock(h, "prod") + `
resource "takoform_edge_kv_namespace" "cache" {
  name = "cache"
}

resource "takoform_gizmo" "g" {
  name           = "g0"
  sprocket_count = 3
  serial_number  = "AB-0001"
  finish         = "gloss"
}
`
	var kv, gz *wire.Resource
	writeV0 := func() {
		kv = createKV(t, h, "prod", "cache")
		gz = createOnHost(t, h, "prod", gizmoRef(t, cat, "1.0.0"), "g0", `{"sprocketCount":3,"serialNumber":"AB-0001","finish":"gloss"}`)
		st := strings.NewReplacer("{{kv_uid}}", kv.Metadata.UID, "{{gizmo_uid}}", gz.Metadata.UID).Replace(string(readFile(t, "testdata/state/v0.tfstate")))
		// the harness's one working directory under base; OpenTofu's local
		// state there is terraform.tfstate
		dirs, _ := filepath.Glob(filepath.Join(base, "work*"))
		if len(dirs) != 1 {
			t.Fatalf("want one working directory under %s, found %v", base, dirs)
		}
		statePath = filepath.Join(dirs[0], "terraform.tfstate")
		if err := os.WriteFile(statePath, []byte(st), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(want map[string]int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			var st struct {
				Resources []struct {
					Type      string
					Instances []struct {
						SchemaVersion int `json:"schema_version"`
					}
				}
			}
			if err := json.Unmarshal(readFile(t, statePath), &st); err != nil {
				return err
			}
			for _, r := range st.Resources {
				if got := r.Instances[0].SchemaVersion; got != want[r.Type] {
					return fmt.Errorf("%s is recorded at schema version %d; want %d", r.Type, got, want[r.Type])
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories(reg),
		WorkingDir:               base,
		Steps: []resource.TestStep{
			{PreConfig: writeV0, Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(st *terraform.State) error {
						return resource.ComposeAggregateTestCheckFunc(
							resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "uid", kv.Metadata.UID),
							resource.TestCheckResourceAttr("takoform_gizmo.g", "uid", gz.Metadata.UID),
						)(st)
					},
					resource.TestCheckResourceAttr("takoform_edge_kv_namespace.cache", "ready", "true"),
					resource.TestCheckResourceAttr("takoform_gizmo.g", "finish", "gloss"),
					resource.TestCheckNoResourceAttr("takoform_gizmo.g", "surface_finish"),
					versions(map[string]int{"takoform_edge_kv_namespace": 1, "takoform_gizmo": 2}),
				)},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
		CheckDestroy: checkGone(t, h, "prod"),
	})
}
