package provider

import (
	"context"
	"strconv"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// MoveResourceState is the framework's MoveResourceState (fwserver
// v1.19) for a resource that moves no state (it does not implement
// ResourceWithMoveState; repo decision 0070): after the target type is
// found and the source's private state decodes, a missing source state is
// OpenTofu's error and any other the refusal naming source and target.
// A nil request answers nothing.
func (s *protoServer) MoveResourceState(_ context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	if req == nil {
		return &tfprotov6.MoveResourceStateResponse{}, nil
	}
	if s.types[req.TargetTypeName] == nil {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: resourceNotFound(req.TargetTypeName)}, nil
	}
	if _, d := decodePrivate(req.SourcePrivate); d.HasError() {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: protoDiagnostics(d)}, nil
	}
	if req.SourceState == nil {
		return &tfprotov6.MoveResourceStateResponse{Diagnostics: protoError("Missing Source Resource State",
			"The source resource state was not provided to the provider for the MoveResourceState operation. "+
				"This is always an issue in Terraform and should be reported to the Terraform maintainers.")}, nil
	}
	return &tfprotov6.MoveResourceStateResponse{Diagnostics: protoError("Unable to Move Resource State",
		"The target resource implementation does not include move resource state support. "+
			"The resource implementation can be updated by the provider developers to include this support with the ResourceWithMoveState interface.\n\n"+
			"Source Provider Address: "+req.SourceProviderAddress+"\n"+
			"Source Resource Type: "+req.SourceTypeName+"\n"+
			"Source Resource Schema Version: "+strconv.FormatInt(req.SourceSchemaVersion, 10)+"\n"+
			"Target Resource Type: "+req.TargetTypeName)}, nil
}

// GenerateResourceConfig is the framework's GenerateResourceConfig
// (fwserver v1.19): the state sent, with null in place of each attribute
// that is deprecated, read-only (computed and not optional), a top-level
// computed optional "id", or an optional string that is empty — nested
// attributes of a single object or of a list's objects likewise. A
// missing state is OpenTofu's error. States carry no unknown values,
// which the framework refuses on an optional string and this server
// leaves as sent.
func (s *protoServer) GenerateResourceConfig(_ context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.GenerateResourceConfigResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	if req.State == nil {
		return &tfprotov6.GenerateResourceConfigResponse{Diagnostics: protoError("Unexpected Generate Config Request",
			"An unexpected error was encountered when generating resource configuration. The current state was missing.\n\n"+
				"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")}, nil
	}
	state, err := req.State.Unmarshal(t.rules.typ)
	if err != nil {
		return &tfprotov6.GenerateResourceConfigResponse{Diagnostics: protoError("Unable to Convert State",
			"An unexpected error was encountered when converting the state from the protocol type. "+
				"This is always an issue in terraform-plugin-framework used to implement the provider and should be reported to the provider developers.\n\n"+
				"Please report this to the provider developer:\n\nUnable to unmarshal DynamicValue: "+err.Error())}, nil
	}
	config, err := tftypes.Transform(state, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		a := attrAt(t.rules.attrs, p)
		if a == nil || v.IsNull() {
			return v, nil
		}
		var str string
		top := len(p.Steps()) == 1
		switch {
		case a.Deprecation != "", a.Computed && !a.Optional,
			top && p.Equal(tftypes.NewAttributePath().WithAttributeName("id")) && a.Computed && a.Optional,
			a.Optional && v.Type().Is(tftypes.String) && v.IsKnown() && v.As(&str) == nil && str == "":
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	resp := &tfprotov6.GenerateResourceConfigResponse{}
	d := internalError(err)
	if err == nil {
		resp.Config, err = dynamicValue(t.rules.typ, config)
		d.Append(internalError(err)...)
	}
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}

// attrAt is the attribute at p (a top-level attribute, or one nested in
// a single object or in an element of a list of objects), nil where p
// leads to no attribute (the root, a list's element object, an element
// of a collection of primitives).
func attrAt(attrs map[string]*planAttr, p *tftypes.AttributePath) *planAttr {
	steps := p.Steps()
	for i := 0; i < len(steps); i++ {
		name, ok := steps[i].(tftypes.AttributeName)
		if !ok || attrs == nil {
			return nil
		}
		a := attrs[string(name)]
		if a == nil || i == len(steps)-1 {
			return a
		}
		if !a.single() {
			if _, ok := steps[i+1].(tftypes.ElementKeyInt); !ok || a.nested == nil {
				return nil
			}
			i++ // the list's element; its attribute is the next step
		}
		attrs = a.nested
	}
	return nil
}
