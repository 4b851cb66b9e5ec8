// Package noopprovider is a do-nothing Terraform/OpenTofu provider (protocol
// 6, terraform-plugin-framework): one resource type, noop_thing, with a
// single required name attribute, whose create, read, update and delete
// touch nothing beyond the state OpenTofu hands them. It measures the
// protocol floor that the takoform provider's plan and apply budgets are
// stated against (ARCHITECTURE.md §7; scripts/bench-provider.sh).
package noopprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// Address is the provider source address the benchmark's dev_overrides use.
const Address = "registry.opentofu.org/takoform/noop"

// New returns the provider factory.
func New() provider.Provider { return &noopProvider{} }

type noopProvider struct{}

func (*noopProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noop"
}

func (*noopProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = pschema.Schema{Description: "A provider whose resources do nothing (a benchmark floor)."}
}

func (*noopProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (*noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return thing{} },
		func() resource.Resource { return wide{} },
	}
}

func (*noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// thing is noop_thing: its state is exactly its configuration.
type thing struct{}

func (thing) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "noop_thing"
}

func (thing) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Does nothing; its state is its configuration.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
		},
	}
}

func (thing) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (thing) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (thing) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (thing) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
