package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// protoServer answers every RPC of the registry's resource types and
// data sources, and every other RPC as the framework answers a type name
// it lacks (server_none.go); mux (NewServer) routes it the first kind and
// the provider-level RPCs, which it answers empty (server_mux.go).
type protoServer struct {
	provider *Provider // the one the framework server in the mux configures: its data is what each RPC loads
	types    map[string]*protoType
	data     map[string]*dataType
	proto    protoSchemas // server_meta.go
}

// protoType is what the server needs of one resource type, built once.
type protoType struct {
	spec  *TypeSpec
	rules *planRules
}

// resource is the type's Resource as the framework configures it for
// each RPC: with the provider configuration's Data, nil before one
// reached a host.
func (s *protoServer) resource(t *protoType) *Resource {
	return &Resource{spec: t.spec, data: s.provider.data.Load()}
}

// ReadResource is the framework's ReadResource (fwserver v1.19): read
// with the current state and identity, then the framework's identity
// checks (an identity may change on the read that follows an import,
// which the private import marker names; the read drops the marker).
func (s *protoServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	private, afterImport, pd := readPrivate(req.Private)
	if pd.HasError() {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoDiagnostics(pd)}, nil
	}
	if req.CurrentState == nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoError("Unexpected Read Request", "An unexpected error was encountered when reading the resource. The current state was missing.\n\n"+
			"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")}, nil
	}
	current, err := req.CurrentState.Unmarshal(t.rules.typ)
	if err != nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoError("Unable to Convert State", err)}, nil
	}
	ident, err := identityOf(t, req.CurrentIdentity)
	if err != nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	// tftypes values are immutable and read builds new ones for what it
	// changes, so request and response share them (the framework copies).
	newIdent := ident
	rresp := outcome{State: current, Identity: &newIdent}
	s.resource(t).read(ctx, current, &rresp)
	d := rresp.Diagnostics
	if !d.HasError() {
		switch {
		case !afterImport && !ident.IsFullyNull() && !ident.Equal(newIdent):
			d.AddError("Unexpected Identity Change", fmt.Sprintf("During the read operation, the Terraform Provider unexpectedly returned a different identity than the previously stored one.\n\n"+
				"This is always a problem with the provider and should be reported to the provider developer.\n\nCurrent Identity: %s\n\nNew Identity: %s", ident, newIdent))
		case newIdent.IsFullyNull():
			d.AddError("Missing Resource Identity After Read", "The Terraform Provider unexpectedly returned no resource identity data after having no errors in the resource read. "+
				"This is always an issue in the Terraform Provider and should be reported to the provider developers.")
		}
	}
	resp := &tfprotov6.ReadResourceResponse{Private: private}
	resp.NewState, err = sameOrEncoded(t.rules.typ, req.CurrentState, current, rresp.State)
	d.Append(internalError(err)...)
	var sentIdent *tfprotov6.DynamicValue
	if req.CurrentIdentity != nil {
		sentIdent = req.CurrentIdentity.IdentityData
	}
	idv, err := sameOrEncoded(identityType, sentIdent, ident, newIdent)
	if err == nil {
		resp.NewIdentity = &tfprotov6.ResourceIdentityData{IdentityData: idv}
	}
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}

// sameOrEncoded is v encoded, or sent itself when v equals was, the value
// sent decoded: a refresh that found no drift, or a plan of no change,
// answers the bytes OpenTofu sent instead of encoding them again.
func sameOrEncoded(typ tftypes.Type, sent *tfprotov6.DynamicValue, was, v tftypes.Value) (*tfprotov6.DynamicValue, error) {
	if sent != nil && v.Equal(was) {
		return sent, nil
	}
	return dynamicValue(typ, v)
}

// PlanResourceChange is the framework's PlanResourceChange (fwserver
// v1.19): the framework's plan (planRules.plan), then modifyPlan, the
// identity planned as the prior one and the private state carried.
func (s *protoServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	private, pd := carriedPrivate(req.PriorPrivate)
	if pd.HasError() {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: protoDiagnostics(pd)}, nil
	}
	vals, err := valuesOf(t.rules.typ, req.Config, req.ProposedNewState, req.PriorState)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: protoError("Unable to Convert Plan Request", err)}, nil
	}
	config, proposed, prior := vals[0], vals[1], vals[2]
	ident, err := identityOf(t, req.PriorIdentity)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	planned, replace, err := t.rules.plan(config, proposed, prior)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: protoError("Error modifying plan", err)}, nil
	}
	mresp := planOutcome{Plan: planned, RequiresReplace: path.Paths{}}
	s.resource(t).modifyPlan(ctx, config, planned, prior, &mresp)
	d := mresp.Diagnostics
	if proposed.IsNull() && !mresp.Plan.IsNull() {
		d.AddError("Unexpected Planned Resource State on Destroy", "The Terraform Provider unexpectedly returned resource state data when the resource was planned for destruction.")
	}
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedPrivate: private}
	resp.PlannedState, err = sameOrEncoded(t.rules.typ, req.PriorState, prior, mresp.Plan) // planning leaves prior as sent
	d.Append(internalError(err)...)
	resp.PlannedIdentity = req.PriorIdentity // planned as the prior one, as sent
	if resp.PlannedIdentity == nil {
		resp.PlannedIdentity, err = identityData(t, ident)
		d.Append(internalError(err)...)
	}
	resp.RequiresReplace, err = attributePaths(normaliseReplace(append(replace, mresp.RequiresReplace...)))
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}

// valueOf unmarshals dv as a value of typ; a missing dv is null, as the
// framework reads it.
func valueOf(typ tftypes.Type, dv *tfprotov6.DynamicValue) (tftypes.Value, error) {
	if dv == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	return dv.Unmarshal(typ)
}

// valuesOf unmarshals each of dvs as valueOf does.
func valuesOf(typ tftypes.Type, dvs ...*tfprotov6.DynamicValue) ([]tftypes.Value, error) {
	out := make([]tftypes.Value, len(dvs))
	for i, dv := range dvs {
		v, err := valueOf(typ, dv)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// identityOf is the identity OpenTofu sent, null when it sent none.
func identityOf(t *protoType, id *tfprotov6.ResourceIdentityData) (tftypes.Value, error) {
	if id == nil {
		return tftypes.NewValue(identityType, nil), nil
	}
	return valueOf(identityType, id.IdentityData)
}

func identityData(t *protoType, v tftypes.Value) (*tfprotov6.ResourceIdentityData, error) {
	dv, err := dynamicValue(identityType, v)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: dv}, nil
}

func dynamicValue(typ tftypes.Type, v tftypes.Value) (*tfprotov6.DynamicValue, error) {
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		return nil, err
	}
	return &dv, nil
}

// attributePaths converts the paths the resource names (attribute names
// and list indexes) to Terraform attribute paths.
func attributePaths(ps path.Paths) ([]*tftypes.AttributePath, error) {
	var out []*tftypes.AttributePath
	for _, p := range ps {
		tp, err := attributePath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, tp)
	}
	return out, nil
}

func attributePath(p path.Path) (*tftypes.AttributePath, error) {
	tp := tftypes.NewAttributePath()
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			tp = tp.WithAttributeName(string(s))
		case path.PathStepElementKeyInt:
			tp = tp.WithElementKeyInt(int(s))
		case path.PathStepElementKeyString:
			tp = tp.WithElementKeyString(string(s))
		default:
			return nil, fmt.Errorf("the path %s has a step %T the provider does not convert", p, step)
		}
	}
	return tp, nil
}

// protoDiagnostics converts diagnostics as the framework does
// (toproto6.Diagnostics): severity, summary, detail and attribute path.
func protoDiagnostics(d diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, dg := range d {
		pd := &tfprotov6.Diagnostic{Summary: dg.Summary(), Detail: dg.Detail(), Severity: protoSeverity(dg.Severity())}
		if wp, ok := dg.(diag.DiagnosticWithPath); ok {
			tp, err := attributePath(wp.Path())
			if err != nil {
				out = append(out, protoError("Unable to Convert Attribute Path", err)...)
			}
			pd.Attribute = tp
		}
		out = append(out, pd)
	}
	return out
}

func protoSeverity(s diag.Severity) tfprotov6.DiagnosticSeverity {
	switch s {
	case diag.SeverityError:
		return tfprotov6.DiagnosticSeverityError
	case diag.SeverityWarning:
		return tfprotov6.DiagnosticSeverityWarning
	}
	return tfprotov6.DiagnosticSeverityInvalid
}

func protoError(summary string, detail any) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: summary, Detail: fmt.Sprint(detail)}}
}

// internalError is err (a value the provider built that does not encode)
// as a diagnostic; none for nil.
func internalError(err error) diag.Diagnostics {
	if err == nil {
		return nil
	}
	return renderError("Cannot encode the response", err, identity{Code: CodeInternal})
}
