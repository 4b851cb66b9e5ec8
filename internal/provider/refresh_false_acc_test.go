package provider_test

import (
	"strings"
	"testing"
)

// TestAccUnknownFormRefWithoutRefresh: state bound to a FormRef the
// running build has no codec for fails closed naming the recorded ref on
// `plan -refresh=false` too (the plan path, not only refresh), never
// planned under the build's default create FormRef.
func TestAccUnknownFormRefWithoutRefresh(t *testing.T) {
	t.Parallel()
	cat := evolutionCatalog(t)
	h, _ := evolutionHost(t, cat)
	v100, v110 := gizmoRef(t, cat, "1.0.0"), gizmoRef(t, cat, "1.1.0")
	cfg := providerBlock(h, "lab") + `
resource "takoform_gizmo" "old" {
  name           = "g-old"
  sprocket_count = 3
  serial_number  = "AB-0001"
}
`
	d := newTofuDir(t, gizmoBuild(t, cat, gizmoType("takoform_gizmo", v100)), cfg)
	d.must("apply", "-auto-approve", "-input=false", "-no-color")
	d.reg = gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110))
	for _, args := range [][]string{{"plan", "-refresh=false"}, {"plan"}} {
		out, err := d.run(append(args, "-input=false", "-no-color")...)
		flat := strings.Join(strings.Fields(out), " ")
		for _, want := range []string{"State is bound to a FormRef this provider build does not support",
			"recorded " + v100.String(), "Form: " + v100.String(), "this build knows " + v110.String(), "Code: takoform.provider/unknown-form-ref"} {
			if err == nil || !strings.Contains(flat, want) {
				t.Fatalf("tofu %s: want %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
		if strings.Contains(flat, "Form: "+v110.String()) {
			t.Fatalf("tofu %s names the build's default create ref:\n%s", strings.Join(args, " "), out)
		}
	}
	d.reg = gizmoBuild(t, cat, gizmoType("takoform_gizmo", v110, v100))
	d.must("destroy", "-auto-approve", "-input=false", "-no-color")
}
