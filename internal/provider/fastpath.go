package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// NewServer is the provider's protocol-6 server over reg: the plugin
// framework's server, with ValidateResourceConfig, ReadResource,
// PlanResourceChange, the create and delete of ApplyResourceChange and
// the same-version UpgradeResourceState of the registry's resource types
// answered on terraform-plugin-go directly (repo decision 0028). They call the
// resources' own Read, ModifyPlan, Create and Delete and reproduce the
// framework's part of each (fastplan.go, fastvalidate.go); every other
// RPC, and any request the fast path does not reproduce (an update,
// private state, a type whose schema has no rules), goes to the
// framework.
func NewServer(version string, reg *Registry) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := &Provider{version: version, registry: reg}
		fw, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		s := &fastServer{ProviderServer: fw, provider: p, types: map[string]*fastType{}}
		ctx := context.Background()
		for name, t := range reg.Types {
			r := &Resource{spec: t}
			rules, err := planRulesOf(ctx, t.Schema, t.ObjectType)
			if err != nil {
				continue // the framework serves it whole
			}
			var ir resource.IdentitySchemaResponse
			r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ir)
			s.types[name] = &fastType{spec: t, rules: rules, identity: ir.IdentitySchema}
		}
		return s, nil
	}
}

// fastServer answers the hot resource RPCs and hands the rest to the
// framework server it embeds.
type fastServer struct {
	tfprotov6.ProviderServer
	provider *Provider
	types    map[string]*fastType
}

// fastType is what the fast path needs of one resource type, built once.
type fastType struct {
	spec     *TypeSpec
	rules    *planRules
	identity identityschema.Schema
}

// resource is the type's Resource as the framework configures it for
// each RPC: with the provider configuration's Data, nil before one
// reached a host.
func (s *fastServer) resource(t *fastType) *Resource {
	return &Resource{spec: t.spec, data: s.provider.data.Load()}
}

// ReadResource is the framework's ReadResource (fwserver v1.19) for a
// state without private data: Read with the current state and identity,
// then the framework's identity checks.
func (s *fastServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	t := s.types[req.TypeName]
	if t == nil || len(req.Private) > 0 || req.CurrentState == nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	current, err := req.CurrentState.Unmarshal(t.rules.typ)
	if err != nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoError("Unable to Convert State", err)}, nil
	}
	ident, err := identityOf(t, req.CurrentIdentity)
	if err != nil {
		return &tfprotov6.ReadResourceResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	// tftypes values are immutable and Read builds new ones for what it
	// changes, so request and response share them (the framework copies).
	rreq := resource.ReadRequest{State: tfsdk.State{Raw: current, Schema: t.spec.Schema},
		Identity: &tfsdk.ResourceIdentity{Raw: ident, Schema: t.identity}}
	rresp := resource.ReadResponse{State: tfsdk.State{Raw: current, Schema: t.spec.Schema},
		Identity: &tfsdk.ResourceIdentity{Raw: ident, Schema: t.identity}}
	s.resource(t).Read(ctx, rreq, &rresp)
	d := rresp.Diagnostics
	if !d.HasError() {
		switch {
		case !ident.IsFullyNull() && !ident.Equal(rresp.Identity.Raw):
			d.AddError("Unexpected Identity Change", fmt.Sprintf("During the read operation, the Terraform Provider unexpectedly returned a different identity than the previously stored one.\n\nCurrent Identity: %s\n\nNew Identity: %s", ident, rresp.Identity.Raw))
		case rresp.Identity.Raw.IsFullyNull():
			d.AddError("Missing Resource Identity After Read", "The Terraform Provider unexpectedly returned no resource identity data after having no errors in the resource read.")
		}
	}
	resp := &tfprotov6.ReadResourceResponse{}
	resp.NewState, err = sameOrEncoded(t.rules.typ, req.CurrentState, current, rresp.State.Raw)
	d.Append(internalError(err)...)
	var sentIdent *tfprotov6.DynamicValue
	if req.CurrentIdentity != nil {
		sentIdent = req.CurrentIdentity.IdentityData
	}
	idv, err := sameOrEncoded(identityType, sentIdent, ident, rresp.Identity.Raw)
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
// v1.19) without private data: the framework's plan (planRules.plan),
// then ModifyPlan, the identity planned as the prior one.
func (s *fastServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	t := s.types[req.TypeName]
	if t == nil || len(req.PriorPrivate) > 0 {
		return s.ProviderServer.PlanResourceChange(ctx, req)
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
	mreq := resource.ModifyPlanRequest{Config: tfsdk.Config{Raw: config, Schema: t.spec.Schema},
		Plan: tfsdk.Plan{Raw: planned, Schema: t.spec.Schema}, State: tfsdk.State{Raw: prior, Schema: t.spec.Schema}}
	mresp := resource.ModifyPlanResponse{Plan: mreq.Plan, RequiresReplace: path.Paths{}}
	s.resource(t).ModifyPlan(ctx, mreq, &mresp)
	d := mresp.Diagnostics
	if proposed.IsNull() && !mresp.Plan.Raw.IsNull() {
		d.AddError("Unexpected Planned Resource State on Destroy", "The Terraform Provider unexpectedly returned resource state data when the resource was planned for destruction.")
	}
	resp := &tfprotov6.PlanResourceChangeResponse{}
	resp.PlannedState, err = sameOrEncoded(t.rules.typ, req.PriorState, prior, mresp.Plan.Raw) // planning leaves prior as sent
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

// ApplyResourceChange is the framework's create and delete (fwserver
// v1.19) without private data: Create with the plan, or Delete with the
// prior state, then the framework's checks of the new state and identity.
// An update goes to the framework.
func (s *fastServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	t := s.types[req.TypeName]
	if t == nil || len(req.PlannedPrivate) > 0 {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	vals, err := valuesOf(t.rules.typ, req.Config, req.PlannedState, req.PriorState)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Apply Request", err)}, nil
	}
	config, planned, prior := vals[0], vals[1], vals[2]
	if !prior.IsNull() && !planned.IsNull() {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	ident, err := identityOf(t, req.PlannedIdentity)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	null := tftypes.NewValue(t.rules.typ, nil)
	state, id := &tfsdk.State{Raw: null, Schema: t.spec.Schema}, &tfsdk.ResourceIdentity{Raw: ident.Copy(), Schema: t.identity}
	var d diag.Diagnostics
	if prior.IsNull() {
		cresp := resource.CreateResponse{State: *state, Identity: id}
		s.resource(t).Create(ctx, resource.CreateRequest{Config: tfsdk.Config{Raw: config, Schema: t.spec.Schema},
			Plan: tfsdk.Plan{Raw: planned, Schema: t.spec.Schema}, Identity: &tfsdk.ResourceIdentity{Raw: ident.Copy(), Schema: t.identity}}, &cresp)
		state, id, d = &cresp.State, cresp.Identity, cresp.Diagnostics
		switch {
		case d.HasError():
		case state.Raw.Equal(null):
			d.AddError("Missing Resource State After Create", "The Terraform Provider unexpectedly returned no resource state after having no errors in the resource creation.")
		case id.Raw.IsFullyNull():
			d.AddError("Missing Resource Identity After Create", "The Terraform Provider unexpectedly returned no resource identity data after having no errors in the resource create.")
		}
	} else {
		dresp := resource.DeleteResponse{State: tfsdk.State{Raw: prior, Schema: t.spec.Schema}, Identity: id}
		s.resource(t).Delete(ctx, resource.DeleteRequest{State: tfsdk.State{Raw: prior, Schema: t.spec.Schema},
			Identity: &tfsdk.ResourceIdentity{Raw: ident.Copy(), Schema: t.identity}}, &dresp)
		state, id, d = &dresp.State, dresp.Identity, dresp.Diagnostics
		if !d.HasError() {
			state.Raw, id.Raw = null, tftypes.NewValue(identityType, nil)
		}
	}
	resp := &tfprotov6.ApplyResourceChangeResponse{}
	resp.NewState, err = dynamicValue(t.rules.typ, state.Raw)
	d.Append(internalError(err)...)
	resp.NewIdentity, err = identityData(t, id.Raw)
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}

// UpgradeResourceState is the framework's passthrough (fwserver v1.19)
// for a state already at the schema's version: the JSON read with the
// current type, attributes the schema no longer has ignored. Any other
// version goes to the framework, which calls the resource's UpgradeState.
func (s *fastServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	t := s.types[req.TypeName]
	if t == nil || req.RawState == nil || req.Version != t.spec.Schema.Version {
		return s.ProviderServer.UpgradeResourceState(ctx, req)
	}
	v, err := stateFromJSON(t.rules.typ, req.RawState)
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: protoError("Unable to Read Previously Saved State for UpgradeResourceState",
			"There was an error reading the saved resource state using the current resource schema.\n\n"+
				"If this resource state was last refreshed with Terraform CLI 0.11 and earlier, it must be refreshed or applied with an older provider version first. "+
				"If you manually modified the resource state, you will need to manually modify it to match the current resource schema. "+
				"Otherwise, please report this to the provider developer:\n\n"+err.Error())}, nil
	}
	dv, err := dynamicValue(t.rules.typ, v)
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: protoDiagnostics(internalError(err))}, nil
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: dv}, nil
}

// stateFromJSON reads a state's JSON as a value of typ, as
// tfprotov6.RawState.UnmarshalWithOpts does with IgnoreUndefinedAttributes
// (attributes typ lacks ignored, those it has and the JSON lacks null), in
// one decoding pass (the library decodes each nested value again); JSON
// this pass does not take (a number or bool sent as a string, a map, a
// flatmap state) and every error are left to the library, whose answer
// it is.
func stateFromJSON(typ tftypes.Object, raw *tfprotov6.RawState) (tftypes.Value, error) {
	if len(raw.JSON) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw.JSON))
		dec.UseNumber()
		var g any
		if dec.Decode(&g) == nil {
			if _, end := dec.Token(); end == io.EOF {
				if v, err := fromGo(typ, g); err == nil {
					return v, nil
				}
			}
		}
	}
	return raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
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
func identityOf(t *fastType, id *tfprotov6.ResourceIdentityData) (tftypes.Value, error) {
	if id == nil {
		return tftypes.NewValue(identityType, nil), nil
	}
	return valueOf(identityType, id.IdentityData)
}

func identityData(t *fastType, v tftypes.Value) (*tfprotov6.ResourceIdentityData, error) {
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
