package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/wire"
)

// BenchmarkModifyPlanKV is the provider's own per-resource plan work for
// one takoform_edge_kv_namespace (ARCHITECTURE.md §7): ModifyPlan of a create
// (config: name) and of an unchanged resource (plan = config + state), no
// host (support profiles are read once per configuration and cached).
func BenchmarkModifyPlanKV(b *testing.B) {
	reg, err := EdgeRegistry()
	if err != nil {
		b.Fatal(err)
	}
	spec := reg.Types["takoform_edge_kv_namespace"]
	if spec == nil {
		b.Fatal("no takoform_edge_kv_namespace")
	}
	data := &Data{Space: "bench"}
	ref := spec.Create.Ref
	lc := data.laneConnOf(wire.V1alpha3)
	lc.support.once.Do(func() { // as read once from a host serving the Edge family
		lc.support.profiles = map[string]wire.SupportProfile{ref.String(): {FormRef: &ref, Operations: []string{"create", "read", "update", "delete"}}}
	})
	for _, i := range spec.Create.Def.ProvidedInterfaces() { // and the contracts it implements
		lc.support.contracts.Store("interface "+i.Name+"@"+i.Version, contractAnswer{digest: spec.Create.contractDigest(i.SchemaDigest)})
	}
	r := &Resource{spec: spec, data: data}
	ctx := context.Background()
	config := map[string]any{"name": "ns-1"}
	state := map[string]any{"name": "ns-1", "space": "bench", "uid": "u-1", "generation": "1", "revision": "1",
		"ready": true, "form_api_version": spec.Create.Ref.APIVersion, "form_kind": spec.Create.Ref.Kind,
		"form_definition_version": spec.Create.Ref.DefinitionVersion, "form_schema_digest": spec.Create.Ref.SchemaDigest}
	value := func(m map[string]any) tfsdk.Plan {
		v, err := fromGo(r.spec.ObjectType, m)
		if err != nil {
			b.Fatal(err)
		}
		return tfsdk.Plan{Raw: v, Schema: spec.Schema}
	}
	cfg, st := value(config), value(state)
	for _, tc := range []struct {
		name  string
		state tfsdk.Plan
	}{{"create", cfg}, {"unchanged", st}} {
		b.Run(tc.name, func(b *testing.B) {
			req := resource.ModifyPlanRequest{Config: tfsdk.Config{Raw: cfg.Raw, Schema: spec.Schema}, Plan: cfg}
			if tc.name == "unchanged" {
				req.Plan = st
				req.State = tfsdk.State{Raw: st.Raw, Schema: spec.Schema}
			} else {
				req.State = tfsdk.State{Raw: tftypes.NewValue(r.spec.ObjectType, nil), Schema: spec.Schema}
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp := &resource.ModifyPlanResponse{Plan: req.Plan}
				r.ModifyPlan(ctx, req, resp)
				if resp.Diagnostics.HasError() {
					b.Fatal(resp.Diagnostics)
				}
			}
		})
	}
}
