package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// dataType is what the server needs of one data source, built once: its
// Terraform type and validation rules, read from its schema
// (TypeSpec.DataAttrs, dataSourceSchema).
type dataType struct {
	spec  *TypeSpec
	typ   tftypes.Object
	attrs map[string]*planAttr
}

// dataTypeOf reads the type and validation rules of t's data source
// (planAttrsOf); errors: as planAttrsOf's.
func dataTypeOf(t *TypeSpec) (*dataType, error) {
	typ := t.DataAttrs.Type()
	attrs, err := planAttrsOf(t.DataAttrs.Attrs, typ, true)
	if err != nil {
		return nil, err
	}
	return &dataType{spec: t, typ: typ, attrs: attrs}, nil
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
	ds := &DataSource{spec: t.spec, typ: t.typ, data: s.provider.data.Load()}
	rresp := outcome{State: config}
	ds.read(ctx, config, &rresp)
	d := rresp.Diagnostics
	resp := &tfprotov6.ReadDataSourceResponse{}
	resp.State, err = dynamicValue(t.typ, rresp.State)
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}
