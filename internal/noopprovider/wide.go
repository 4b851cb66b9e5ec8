package noopprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// wideConditionAttrs are the members of one conditions element, as in the
// takoform provider's envelope (docs/resources/edge_kv_namespace.md).
var wideConditionAttrs = []string{"type", "status", "reason", "message", "host_reason", "observed_generation", "last_transition_time"}

// wideComputed are the computed string attributes of the takoform
// envelope; wideKept are those whose planned value is the prior state's.
var (
	wideComputed = []string{"generation", "revision", "outputs_json", "relation_drift_reason", "pending_operation_id"}
	wideKept     = []string{"uid", "form_api_version", "form_kind", "form_definition_version", "form_schema_digest", "form_package_digest"}
	// wideNull are the computed attributes an applied resource leaves null
	// in steady state, as the takoform envelope reports them.
	wideNull = map[string]bool{"relation_drift_reason": true, "pending_operation_id": true}
	// wideReplace are the attributes whose change replaces the resource.
	wideReplace = []string{"name", "space"}
)

// wide is noop_wide: a resource whose schema has the shape of
// takoform_edge_kv_namespace (the same attribute names, types and
// required/optional/computed flags, which TestWideHasTheKVNamespaceShape
// checks; the plan modifiers are copied by hand) and which, like noop_thing, calls nothing. Its create fills
// the computed attributes with constants; read, update and delete touch
// nothing. It bounds what OpenTofu and the plugin framework alone cost for
// a schema this wide (scripts/bench-provider.sh prints it as a second
// floor).
type wide struct{}

func (wide) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "noop_wide"
}

func (wide) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()} // wideReplace
	cond := map[string]schema.Attribute{}
	for _, n := range wideConditionAttrs {
		cond[n] = schema.StringAttribute{Computed: true}
	}
	attrs := map[string]schema.Attribute{
		"name":           schema.StringAttribute{Required: true, PlanModifiers: replace},
		"space":          schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace},
		"create_timeout": schema.StringAttribute{Optional: true},
		"delete_timeout": schema.StringAttribute{Optional: true},
		"ready":          schema.BoolAttribute{Computed: true},
		"conditions": schema.ListNestedAttribute{Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: cond}},
	}
	for _, n := range wideComputed {
		attrs[n] = schema.StringAttribute{Computed: true}
	}
	for _, n := range wideKept {
		attrs[n] = schema.StringAttribute{Computed: true, PlanModifiers: keep}
	}
	resp.Schema = schema.Schema{Description: "Does nothing; its schema has the shape of takoform_edge_kv_namespace.", Attributes: attrs}
}

// Create sets every unknown computed attribute to a constant.
func (wide) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
	set := func(name string, v attr.Value) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
	set("space", types.StringValue("bench"))
	set("ready", types.BoolValue(true))
	for _, n := range append(append([]string{}, wideComputed...), wideKept...) {
		if wideNull[n] {
			set(n, types.StringNull())
		} else {
			set(n, types.StringValue("1"))
		}
	}
	condType := map[string]attr.Type{}
	cond := map[string]attr.Value{}
	for _, n := range wideConditionAttrs {
		condType[n] = types.StringType
		cond[n] = types.StringValue("True")
	}
	obj := types.ObjectValueMust(condType, cond)
	set("conditions", types.ListValueMust(types.ObjectType{AttrTypes: condType}, []attr.Value{obj}))
}

func (wide) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (wide) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (wide) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
