package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/internal/provider/tfschema"
	"github.com/takoform/takoform/spaceid"
	"github.com/takoform/takoform/wire"
)

// DataSource is THE generic Form data source: it reads one existing
// resource of its type by space and name, under any exact FormRef the type
// has a codec for, and reports its identity (uid, FormRef), generation,
// revision, conditions and declared outputs without managing it. A read
// naming another exact FormRef addresses nothing (spec/host-api-v1alpha3.md
// §1.6), so trying each supported ref finds the one the resource is bound
// to, never a second one.
type DataSource struct {
	spec *TypeSpec
	typ  tftypes.Object // its value type (TypeSpec.DataAttrs)
	fw   dschema.Schema // the framework's schema, for the framework adapter (Schema)
	data *Data
}

var _ datasource.DataSourceWithConfigure = (*DataSource)(nil)

// dataRefAttrs are the FormRef inputs of a data source, all four or none.
var dataRefAttrs = []string{attrAPIVersion, attrKind, attrDefinitionVersion, attrSchemaDigest}

// dataCopied are the envelope attributes a data source reports exactly as
// the resource type does (same type, same description).
var dataCopied = []string{attrUID, attrGeneration, attrRevision, attrConditions, attrReady, attrOutputsJSON, attrPackageDigest}

// dataDocs are the descriptions of the data source's inputs, where they
// differ from the resource's (envelopeDocs).
var dataDocs = map[string]string{
	"name":  "`metadata.name` of the resource to read.",
	"space": "SpaceID to read from, exactly as written (never trimmed or case-folded); the provider's `space` when omitted.",
	"form":  " Set all four `form_*` attributes to read under that exact FormRef (one this provider build supports for the type); leave all four unset to try each FormRef the type supports, its default create FormRef first. Reports the FormRef the resource is bound to.",
}

func (p *Provider) dataSources() []func() datasource.DataSource {
	var out []func() datasource.DataSource
	for _, name := range p.registry.names() {
		t := p.registry.Types[name]
		s, typ := frameworkDataSchema(t.DataAttrs), t.DataAttrs.Type()
		out = append(out, func() datasource.DataSource { return &DataSource{spec: t, typ: typ, fw: s} })
	}
	return out
}

// dataSourceSchema derives a type's data source schema from its resource
// schema (TypeSpec.Attrs): name (R), space and the four FormRef members
// (OC), and, computed, the envelope attributes of dataCopied plus every
// declared output.
func dataSourceSchema(t *TypeSpec) *tfschema.Schema {
	attrs := map[string]*tfschema.Attr{
		"name":  {Kind: tfschema.String, Required: true, Description: plain(dataDocs["name"]), MarkdownDescription: dataDocs["name"]},
		"space": {Kind: tfschema.String, Optional: true, Computed: true, Description: plain(dataDocs["space"]), MarkdownDescription: dataDocs["space"]},
	}
	for _, a := range dataRefAttrs {
		md := envelopeDocs[a] + dataDocs["form"]
		attrs[a] = &tfschema.Attr{Kind: tfschema.String, Optional: true, Computed: true, Description: plain(md), MarkdownDescription: md}
	}
	names := append([]string(nil), dataCopied...)
	for _, o := range t.Create.Outputs {
		names = append(names, snake(o))
	}
	for _, n := range names {
		if a, ok := computedAttr(t.Attrs.Attrs[n]); ok {
			attrs[n] = a
		}
	}
	ref := t.DefaultCreate
	md := "Reads an existing `" + t.Name + "` by space and name without managing it: its uid, exact FormRef, generation, conditions and declared outputs.\n\n" +
		formDoc(t) + fmt.Sprintf("\n\nThe type's default create FormRef is `%s` `%s` `%s` (schema digest `%s`).", ref.APIVersion, ref.Kind, ref.DefinitionVersion, ref.SchemaDigest)
	return &tfschema.Schema{Attrs: attrs, Description: plain(md), MarkdownDescription: md}
}

// computedAttr is the data source form of a computed resource attribute
// of a scalar kind, or a list of objects of such: computed only, same
// descriptions, no default or modifier; none for a (nil) or another.
func computedAttr(a *tfschema.Attr) (*tfschema.Attr, bool) {
	if a == nil {
		return nil, false
	}
	out := &tfschema.Attr{Kind: a.Kind, Computed: true, Description: a.Description, MarkdownDescription: a.MarkdownDescription}
	switch a.Kind {
	case tfschema.String, tfschema.Bool, tfschema.Int64, tfschema.Float64:
		return out, true
	case tfschema.ListNested:
		out.Nested = map[string]*tfschema.Attr{}
		for n, na := range a.Nested {
			c, ok := computedAttr(na)
			if !ok {
				return nil, false
			}
			out.Nested[n] = c
		}
		return out, true
	}
	return nil, false
}

// Metadata names the data source after its resource type.
func (d *DataSource) Metadata(_ context.Context, _ datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = d.spec.Name
}

// Schema is the data source's one schema.
func (d *DataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.fw
}

// Configure receives the provider configuration's shared Data.
func (d *DataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if v, ok := req.ProviderData.(*Data); ok {
		d.data = v
	}
}

// read reads the resource of the configuration config, recording its
// state in resp, under the configured FormRef, or under each
// FormRef the type supports, the create family's first (createFamilyFirst);
// when refs of two families answer it refuses (data-source-ambiguous,
// spec/lane-v1beta1.md §13.9). Only
// resource_not_found moves on to the next ref; every other error is
// reported as it is. Errors: a name outside ^[a-z][a-z0-9-]{0,62}$
// (spec/host-api-v1alpha3.md §1.2) or an incomplete or unsupported
// FormRef (invalid-config), an invalid or missing space (invalid-space,
// space-missing),
// and a resource that exists under none of the refs (data-source-not-found).
func (d *DataSource) read(ctx context.Context, config tftypes.Value, resp *outcome) {
	cfg, err := attrsOf(config)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the configuration", err, identity{Type: d.spec.Name, Code: CodeInternal})...)
		return
	}
	e := envelopeOf(cfg)
	name := e.Name
	if err := form.ValidateName(name); err != nil {
		resp.Diagnostics.Append(renderError("Invalid name", err, identity{Type: d.spec.Name, Name: name, Code: CodeInvalidConfig})...)
		return
	}
	refs, err := d.refs(cfg, e.Ref)
	if err != nil {
		resp.Diagnostics.Append(renderError("Invalid FormRef for data source "+d.spec.Name, err, identity{Type: d.spec.Name, Name: name, Code: CodeInvalidConfig})...)
		return
	}
	if d.data == nil {
		resp.Diagnostics.Append(renderError("The provider is not configured", errors.New("the provider's endpoint, space or token was not known when it was configured"),
			identity{Type: d.spec.Name, Code: CodeInvalidConfig})...)
		return
	}
	space := e.Space
	if space == "" {
		space = d.data.Space
	}
	id := identity{Type: d.spec.Name, Space: space, Name: name}
	if space == "" {
		resp.Diagnostics.Append(renderError("No space to read from", errors.New("the data source sets no space and the provider has none"), withCode(id, CodeSpaceMissing))...)
		return
	}
	if err := spaceid.Validate(space); err != nil {
		resp.Diagnostics.Append(renderError("Invalid space", fmt.Errorf("the data source's space %q: %w", space, err), withCode(id, CodeInvalidSpace))...)
		return
	}
	if len(refs) > 1 {
		refs = d.served(ctx, d.createFamilyFirst(ctx, refs, space))
	}
	// the first answer of each family; two families answering is ambiguous
	// (spec/lane-v1beta1.md §13.9)
	var hit *wire.Resource
	var hitRef form.FormRef
	for _, ref := range refs {
		if hit != nil && ref.APIVersion == hitRef.APIVersion {
			continue
		}
		ref := ref
		hc, err := d.data.clientFor(ctx, ref)
		if err != nil && hit != nil {
			continue // the other family's lane is unavailable: no second answer there
		}
		var res *wire.Resource
		if err == nil {
			res, err = hc.Read(ctx, client.Address{Space: space, Ref: ref, Name: name})
		}
		if client.IsNotFound(err) {
			continue
		}
		if err != nil {
			id.Form = &ref
			resp.Diagnostics.Append(renderError("Cannot read "+d.spec.Name, err, id)...)
			return
		}
		if hit != nil {
			id.Code = CodeDataSourceAmbiguous
			resp.Diagnostics.Append(renderError(fmt.Sprintf("%s %q exists in two families", d.spec.Name, name),
				fmt.Errorf("space %q holds %s %q under %s and under %s; set form_api_version, form_kind, form_definition_version and form_schema_digest to the one to read",
					space, ref.Kind, name, hitRef, ref), id)...)
			return
		}
		hit, hitRef = res, ref
	}
	if hit != nil {
		ref := hitRef
		id.Form = &ref
		c := d.spec.Codecs[ref]
		attrs := copyAttrs(cfg)
		if err := c.Decode(hit, attrs, nil); err != nil {
			resp.Diagnostics.Append(renderError("The host's answer cannot be recorded", err, withCode(id, CodeHostResponseInvalid))...)
			return
		}
		for _, a := range d.spec.foreign(c) {
			attrs[a] = nil
		}
		v, err := fromGo(d.typ, attrs)
		if err != nil {
			resp.Diagnostics.Append(renderError("The host's answer cannot be recorded", err, withCode(id, CodeHostResponseInvalid))...)
			return
		}
		resp.State = v
		return
	}
	resp.Diagnostics.Append(renderError(fmt.Sprintf("No %s named %q in space %q", d.spec.Name, name, space),
		fmt.Errorf("the host holds no %s %q in space %q under %s", d.spec.DefaultCreate.Kind, name, space, refList(refs)),
		withCode(id, CodeDataSourceNotFound))...)
}

// createFamilyFirst orders refs so that the create family's (createCodec
// with no targets: create_lane's, else the default) come first, its
// create ref leading, then the other family's (spec/lane-v1beta1.md §13.9).
func (d *DataSource) createFamilyFirst(ctx context.Context, refs []form.FormRef, space string) []form.FormRef {
	r := &Resource{spec: d.spec, data: d.data}
	c, refusal := r.createCodec(ctx, nil, space)
	if refusal != nil {
		return refs
	}
	out := []form.FormRef{c.Ref}
	for _, same := range []bool{true, false} {
		for _, ref := range refs {
			if ref != c.Ref && (ref.APIVersion == c.Ref.APIVersion) == same {
				out = append(out, ref)
			}
		}
	}
	return out
}

// served keeps the refs the host has a support profile for (read once per
// configuration): a host answers form_unknown under a FormRef it does not
// serve, so it can hold nothing there (decision
// spec/decisions/0016-equivalent-identities.md). When the profiles cannot
// be read, every ref is tried; a ref of a lane not negotiated is dropped.
func (d *DataSource) served(ctx context.Context, refs []form.FormRef) []form.FormRef {
	var out []form.FormRef
	for _, r := range refs {
		_, ok, err := d.data.profileOf(ctx, r)
		var lu *laneUnavailableError
		if ok || (err != nil && !errors.As(err, &lu)) {
			out = append(out, r) // served, or its lane's profiles unreadable: tried; a lane not negotiated holds nothing to read
		}
	}
	if len(out) == 0 {
		return refs
	}
	return out
}

// refs are the FormRefs to read under: the configured one (all four form_*
// members set, and supported by the type), else every supported ref with
// the default create ref first.
func (d *DataSource) refs(cfg map[string]any, ref form.FormRef) ([]form.FormRef, error) {
	var set, unset []string
	for _, a := range dataRefAttrs {
		if str(cfg, a) != "" {
			set = append(set, a)
		} else {
			unset = append(unset, a)
		}
	}
	switch len(set) {
	case 0:
		out := []form.FormRef{d.spec.DefaultCreate}
		for _, r := range d.spec.KnownRefs() {
			if r != d.spec.DefaultCreate {
				out = append(out, r)
			}
		}
		return out, nil
	case len(dataRefAttrs):
		if _, ok := d.spec.Codec(ref); !ok {
			return nil, fmt.Errorf("%s is not a FormRef %s supports; it supports %s", ref, d.spec.Name, refList(d.spec.KnownRefs()))
		}
		return []form.FormRef{ref}, nil
	}
	return nil, fmt.Errorf("%s set but %s unset: set all four form_* attributes to read under one exact FormRef, or none to try every FormRef the type supports",
		strings.Join(set, ", "), strings.Join(unset, ", "))
}
