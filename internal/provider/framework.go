package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The generic resource's operations work on values (repo decision 0066,
// ARCHITECTURE.md §3.1 D27): each takes the Terraform values it reads and
// writes its outcome, and the plugin-go server (server.go) calls them.
// The framework's resource and data-source interfaces below are thin
// adapters over the same operations, for the framework server that is
// the oracle of the differential tests (server_rpc_test.go,
// server_host_test.go); the framework server in NewServer's mux serves
// only the provider block (repo decision 0070), and our server's schemas
// are built without it (server_meta.go, repo decision 0069).

// outcome is what one operation of a resource or data source records:
// the new state, the identity (nil when the caller records none; the
// framework passes none where a resource has no identity) and
// diagnostics.
type outcome struct {
	State       tftypes.Value
	Identity    *tftypes.Value
	Diagnostics diag.Diagnostics
}

// planOutcome is what ModifyPlan records: the plan, the paths whose change
// requires replacement, and diagnostics.
type planOutcome struct {
	Plan            tftypes.Value
	RequiresReplace path.Paths
	Diagnostics     diag.Diagnostics
}

// Create is the framework's view of create.
func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	out := outcome{State: resp.State.Raw}
	if resp.Identity != nil {
		out.Identity = &resp.Identity.Raw
	}
	r.create(ctx, req.Plan.Raw, &out)
	resp.State.Raw = out.State
	resp.Diagnostics.Append(out.Diagnostics...)
}

// Read is the framework's view of read.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	out := outcome{State: resp.State.Raw}
	if resp.Identity != nil {
		out.Identity = &resp.Identity.Raw
	}
	r.read(ctx, req.State.Raw, &out)
	resp.State.Raw = out.State
	resp.Diagnostics.Append(out.Diagnostics...)
}

// Update is the framework's view of update.
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	out := outcome{State: resp.State.Raw}
	if resp.Identity != nil {
		out.Identity = &resp.Identity.Raw
	}
	r.update(ctx, req.Plan.Raw, req.State.Raw, &out)
	resp.State.Raw = out.State
	resp.Diagnostics.Append(out.Diagnostics...)
}

// Delete is the framework's view of destroy.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	out := outcome{State: resp.State.Raw}
	r.destroy(ctx, req.State.Raw, &out)
	resp.Diagnostics.Append(out.Diagnostics...)
}

// ImportState is the framework's view of importState.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	out := outcome{State: resp.State.Raw}
	if resp.Identity != nil {
		out.Identity = &resp.Identity.Raw
	}
	ident := tftypes.NewValue(identityType, nil)
	if req.Identity != nil {
		ident = req.Identity.Raw
	}
	r.importState(ctx, req.ID, ident, &out)
	resp.State.Raw = out.State
	resp.Diagnostics.Append(out.Diagnostics...)
}

// ModifyPlan is the framework's view of modifyPlan.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	out := planOutcome{Plan: resp.Plan.Raw, RequiresReplace: resp.RequiresReplace}
	r.modifyPlan(ctx, req.Config.Raw, req.Plan.Raw, req.State.Raw, &out)
	resp.Plan.Raw, resp.RequiresReplace = out.Plan, out.RequiresReplace
	resp.Diagnostics.Append(out.Diagnostics...)
}

// Read is the framework's view of the data source's read.
func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	out := outcome{State: resp.State.Raw}
	d.read(ctx, req.Config.Raw, &out)
	resp.State.Raw = out.State
	resp.Diagnostics.Append(out.Diagnostics...)
}

// UpgradeState registers one upgrader per earlier schema version that has
// a frozen layout of this type (priorLayout); each decodes the old value
// with that frozen layout (PriorSchema) and upgrades it (upgrade).
func (r *Resource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	out := map[int64]resource.StateUpgrader{}
	for v := int64(0); v < r.spec.Lineage.Version; v++ {
		layout, ok := r.priorLayout(v)
		if !ok {
			continue // never released at v: state at v cannot exist
		}
		from := v
		prior := priorSchema(layout, v)
		out[v] = resource.StateUpgrader{PriorSchema: &prior,
			StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
				o := outcome{State: resp.State.Raw}
				r.upgrade(ctx, from, req.State.Raw, &o)
				resp.State.Raw = o.State
				resp.Diagnostics.Append(o.Diagnostics...)
			}}
	}
	return out
}

// priorSchema is the framework schema of a frozen layout: every attribute
// Optional with exactly the frozen type, which is all decoding needs.
func priorSchema(t tftypes.Object, version int64) schema.Schema {
	s := schema.Schema{Version: version, Attributes: map[string]schema.Attribute{}}
	for name, at := range t.AttributeTypes {
		s.Attributes[name] = priorAttribute(at)
	}
	return s
}

func priorAttribute(t tftypes.Type) schema.Attribute {
	switch tt := t.(type) {
	case tftypes.List:
		if o, ok := tt.ElementType.(tftypes.Object); ok {
			nested := map[string]schema.Attribute{}
			for n, a := range o.AttributeTypes {
				nested[n] = priorAttribute(a)
			}
			return schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: nested}}
		}
		return schema.ListAttribute{Optional: true, ElementType: attrType(tt.ElementType)}
	case tftypes.Set:
		return schema.SetAttribute{Optional: true, ElementType: attrType(tt.ElementType)}
	case tftypes.Map:
		return schema.MapAttribute{Optional: true, ElementType: attrType(tt.ElementType)}
	case tftypes.Object:
		return schema.ObjectAttribute{Optional: true, AttributeTypes: attrTypes(tt)}
	}
	switch {
	case t.Is(tftypes.Number):
		return schema.NumberAttribute{Optional: true}
	case t.Is(tftypes.Bool):
		return schema.BoolAttribute{Optional: true}
	}
	return schema.StringAttribute{Optional: true}
}

// attrType is the framework type of a frozen tftypes type.
func attrType(t tftypes.Type) attr.Type {
	switch tt := t.(type) {
	case tftypes.List:
		return types.ListType{ElemType: attrType(tt.ElementType)}
	case tftypes.Set:
		return types.SetType{ElemType: attrType(tt.ElementType)}
	case tftypes.Map:
		return types.MapType{ElemType: attrType(tt.ElementType)}
	case tftypes.Object:
		return types.ObjectType{AttrTypes: attrTypes(tt)}
	}
	switch {
	case t.Is(tftypes.Number):
		return types.NumberType
	case t.Is(tftypes.Bool):
		return types.BoolType
	}
	return types.StringType
}

// attrTypes are the framework types of a frozen object type's attributes.
func attrTypes(o tftypes.Object) map[string]attr.Type {
	m := make(map[string]attr.Type, len(o.AttributeTypes))
	for n, a := range o.AttributeTypes {
		m[n] = attrType(a)
	}
	return m
}
