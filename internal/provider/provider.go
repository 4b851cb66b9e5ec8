// Package provider is the takoform Terraform/OpenTofu provider (protocol
// 6, terraform-plugin-framework): one generic Form resource driven by a
// Registry of resource types (schema from the default create definition,
// one codec per supported exact FormRef), talking to a Takoform host
// through package client.
package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

// Provider is the takoform provider over one registry.
type Provider struct {
	version  string
	registry *Registry
	data     atomic.Pointer[Data] // the last Configure's, as the framework hands it to resources (server.go)
}

// New returns a factory of the whole provider on the plugin framework,
// its resource types and data sources included, for a registry: the
// oracle of the differential tests (server_rpc_test.go,
// server_host_test.go) and the provider of the framework-driven tests.
// The shipped build serves NewServer, where the framework answers only
// the provider block (repo decision 0070).
func New(version string, reg *Registry) func() provider.Provider {
	return func() provider.Provider { return &Provider{version: version, registry: reg} }
}

type providerModel struct {
	Endpoint types.String `tfsdk:"endpoint"`
	Space    types.String `tfsdk:"space"`
	Token    types.String `tfsdk:"token"`
	// CACertificate, CACertificateFile: a private CA (repo decision 0008).
	CACertificate     types.String `tfsdk:"ca_certificate"`
	CACertificateFile types.String `tfsdk:"ca_certificate_file"`
	// CreateLane: the family new resources are created in
	// (spec/lane-v1beta1.md §13.6).
	CreateLane types.String `tfsdk:"create_lane"`
}

// Metadata names the provider.
func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "takoform"
	resp.Version = p.version
}

// Schema is the provider configuration.
func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages Takoform resources on a host serving the Host API lanes forms.takoform.com/v1alpha3 and forms.takoform.com/v1beta1.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{Optional: true, Description: "Host origin, e.g. https://host.example (or TAKOFORM_ENDPOINT). Plain http only for loopback."},
			"space":    schema.StringAttribute{Optional: true, Description: "Default SpaceID of every resource (or TAKOFORM_SPACE); exact, never trimmed."},
			"token":    schema.StringAttribute{Optional: true, Sensitive: true, Description: "Bearer token (or TAKOFORM_TOKEN)."},
			"ca_certificate": schema.StringAttribute{Optional: true, Description: "PEM CA certificate(s) to trust for an https endpoint instead of the system roots, " +
				"for a host with a certificate from a private CA (or TAKOFORM_CA_CERTIFICATE). At most one of ca_certificate and ca_certificate_file."},
			"ca_certificate_file": schema.StringAttribute{Optional: true, Description: "Path of a PEM file of CA certificate(s), as ca_certificate (or TAKOFORM_CA_CERTIFICATE_FILE)."},
			"create_lane": schema.StringAttribute{Optional: true, Description: "The lane, and so the Edge family, every new resource of this configuration is created in: " +
				"\"v1beta1\" (edge.forms.takoform.com/v1beta1) or \"v1alpha3\" (edge.forms.takoform.com/v1alpha1) (or TAKOFORM_CREATE_LANE). " +
				"Unset: the family in which all known relation targets of the new resource exist; with none, v1beta1 when the host serves the type there, else v1alpha3. " +
				"Existing resources never move."},
		},
	}
	describeProvider(&resp.Schema)
}

// Data is what every resource of one provider configuration shares: one
// client per lane (one HTTP connection pool each, discovery done once;
// lanes.go), support profiles fetched at most once per lane, the create
// lane (createlane.go) and the relation targets looked up for creates.
type Data struct {
	// Client is lane v1alpha3's client (nil when that lane could not be
	// negotiated); a Data built by hand answers on Client's lane only.
	Client   *client.Client
	Space    string
	Registry *Registry
	// CreateLane is the create_lane setting ("" unset, "v1alpha3" or
	// "v1beta1"; spec/lane-v1beta1.md §13.6).
	CreateLane string
	lanes      map[string]*laneConn // by lane name (lanes.go)
	lanesOnce  sync.Once
	targets    sync.Map // relation target lookups (createlane.go)
	planned    sync.Map // the family of each create this run planned, by space, kind and name (createlane.go)
	claims     claims   // addresses this run creates (mutation.go)
}

type supportCache struct {
	once      sync.Once
	profiles  map[string]wire.SupportProfile // by group/kind/definitionVersion
	err       error
	contracts sync.Map // "interface|binding name@version" → contractAnswer (support.go)
}

// Configure selects endpoint, space and token (attribute, else
// environment), validates the space before any host call, then negotiates.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	p.data.Store(nil)
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	endpoint := pick(m.Endpoint, "TAKOFORM_ENDPOINT")
	space := pick(m.Space, "TAKOFORM_SPACE")
	token := pick(m.Token, "TAKOFORM_TOKEN")
	caPEM := pick(m.CACertificate, "TAKOFORM_CA_CERTIFICATE")
	caFile := pick(m.CACertificateFile, "TAKOFORM_CA_CERTIFICATE_FILE")
	createLane := pick(m.CreateLane, "TAKOFORM_CREATE_LANE")
	if m.Endpoint.IsUnknown() || m.Space.IsUnknown() || m.Token.IsUnknown() || m.CACertificate.IsUnknown() || m.CACertificateFile.IsUnknown() || m.CreateLane.IsUnknown() {
		return // configured later, once the values are known
	}
	if space != "" {
		if err := spaceid.Validate(space); err != nil {
			resp.Diagnostics.Append(renderError("Invalid provider space", fmt.Errorf("the provider's space (or TAKOFORM_SPACE) %q: %w", space, err), identity{Code: CodeInvalidSpace})...)
			return
		}
	}
	if err := validCreateLane(createLane); err != nil {
		resp.Diagnostics.Append(renderError("Invalid create_lane", err, identity{Code: CodeInvalidConfig})...)
		return
	}
	if endpoint == "" {
		resp.Diagnostics.Append(renderError("Missing host endpoint", errors.New("the provider block sets no endpoint and TAKOFORM_ENDPOINT is empty"), identity{Code: CodeEndpointMissing})...)
		return
	}
	if _, err := client.ParseEndpoint(endpoint); err != nil {
		resp.Diagnostics.Append(renderError("Invalid host endpoint", err, identity{Code: CodeInvalidConfig})...)
		return
	}
	ca, err := caCertificate(caPEM, caFile)
	if err != nil {
		resp.Diagnostics.Append(renderError("Invalid CA certificate", err, identity{Code: CodeInvalidConfig})...)
		return
	}
	lanes := negotiateLanes(ctx, endpoint, client.Options{Token: token, CACertificatePEM: ca}, func(l wire.Lane) string { return UserAgentOn(p.version, l) })
	def := lanes[wire.DefaultLane.Name]
	if negotiatedNone(lanes) {
		// no lane at all: the host is unreachable, untrusted or refuses
		// the token; the default lane's error says why
		resp.Diagnostics.Append(renderError("Cannot negotiate with the Takoform host", def.err, identity{Code: negotiationCode(def.err)})...)
		return
	}
	data := &Data{Client: def.client, Space: space, Registry: p.registry, CreateLane: createLane, lanes: lanes}
	resp.ResourceData = data
	resp.DataSourceData = data
	p.data.Store(data)
}

// UserAgent is the User-Agent the provider of version v sends:
// "terraform-provider-takoform/<v> (forms.takoform.com/v1alpha3)"; the shipped
// binary's v is internal/version.String() (decision
// spec/decisions/0008-deployable-host.md).
func UserAgent(v string) string { return UserAgentOn(v, wire.V1alpha3) }

// UserAgentOn is the User-Agent the provider of version v sends on lane l.
func UserAgentOn(v string, l wire.Lane) string {
	return "terraform-provider-takoform/" + v + " (" + l.Name + ")"
}

func pick(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

// Resources registers one generic resource per registry type.
func (p *Provider) Resources(context.Context) []func() resource.Resource {
	var out []func() resource.Resource
	for _, name := range p.registry.names() {
		t := p.registry.Types[name]
		out = append(out, func() resource.Resource { return &Resource{spec: t} })
	}
	return out
}

// DataSources registers one generic data source per registry type
// (datasource.go).
func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return p.dataSources()
}
