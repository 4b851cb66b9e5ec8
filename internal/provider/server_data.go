package provider

import (
	"context"
	"fmt"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// dataType is what the server needs of one data source, built once: its
// schema (dataSourceSchema), Terraform type and validation rules.
type dataType struct {
	spec   *TypeSpec
	schema dschema.Schema
	typ    tftypes.Object
	attrs  map[string]*planAttr
}

// dataTypeOf builds t's data source (dataSourceSchema) and reads the
// validation rules of its attributes; errors: an attribute kind the
// rules do not take.
func dataTypeOf(ctx context.Context, t *TypeSpec) (*dataType, error) {
	s := dataSourceSchema(t)
	typ, ok := s.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("the schema's type is not an object")
	}
	attrs, err := dataAttrsOf(s.Attributes, typ)
	if err != nil {
		return nil, err
	}
	return &dataType{spec: t, schema: s, typ: typ, attrs: attrs}, nil
}

func dataAttrsOf(in map[string]dschema.Attribute, typ tftypes.Object) (map[string]*planAttr, error) {
	out := make(map[string]*planAttr, len(in))
	for name, a := range in {
		p := &planAttr{typ: typ.AttributeTypes[name], required: a.IsRequired(), optional: a.IsOptional(), computed: a.IsComputed(), deprecated: a.GetDeprecationMessage()}
		switch a := a.(type) {
		case dschema.StringAttribute, dschema.BoolAttribute, dschema.Int64Attribute, dschema.Float64Attribute:
		case dschema.ListNestedAttribute:
			lt, ok := p.typ.(tftypes.List)
			et, ok2 := lt.ElementType.(tftypes.Object)
			if !ok || !ok2 {
				return nil, fmt.Errorf("attribute %s: a list of %s", name, p.typ)
			}
			nested, err := dataAttrsOf(a.NestedObject.Attributes, et)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %w", name, err)
			}
			p.nested = nested
		default:
			return nil, fmt.Errorf("attribute %s: a %T", name, a)
		}
		out[name] = p
	}
	return out, nil
}

// ValidateDataResourceConfig is the framework's (fwserver v1.19
// SchemaValidate) for the data source schema, which has no validators:
// the checks of validateAttrs.
func (s *protoServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	t := s.data[req.TypeName]
	switch {
	case t == nil:
		return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: dataSourceNotFound(req.TypeName)}, nil
	case req.Config == nil:
		return &tfprotov6.ValidateDataResourceConfigResponse{}, nil // the framework validates no configuration
	}
	config, err := req.Config.Unmarshal(t.typ)
	if err != nil {
		return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: protoError("Unable to Convert Configuration", err)}, nil
	}
	var d diag.Diagnostics
	validateAttrs(t.attrs, membersOf(t.attrs, config), path.Empty(), &d)
	return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: protoDiagnostics(d)}, nil
}

// ReadDataSource is the framework's ReadDataSource (fwserver v1.19): the
// data source's read with the configuration as the state it starts from.
func (s *protoServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	t := s.data[req.TypeName]
	if t == nil {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: dataSourceNotFound(req.TypeName)}, nil
	}
	config, err := valueOf(t.typ, req.Config)
	if err != nil {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: protoError("Unable to Convert Configuration", err)}, nil
	}
	ds := &DataSource{spec: t.spec, schema: t.schema, data: s.provider.data.Load()}
	rresp := outcome{State: config}
	ds.read(ctx, config, &rresp)
	d := rresp.Diagnostics
	resp := &tfprotov6.ReadDataSourceResponse{}
	resp.State, err = dynamicValue(t.typ, rresp.State)
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}
