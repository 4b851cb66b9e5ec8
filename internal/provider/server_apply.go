package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ApplyResourceChange is the framework's ApplyResourceChange (fwserver
// v1.19, repo decision 0066): Create when the prior state is null, Delete
// when the planned state is null, Update otherwise, each then checked as
// the framework checks it (applyChecks); the planned private state is
// carried by an update and a delete that failed, and dropped by a create
// and a delete that succeeded.
func (s *protoServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	private, pd := carriedPrivate(req.PlannedPrivate)
	if pd.HasError() {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoDiagnostics(pd)}, nil
	}
	vals, err := valuesOf(t.rules.typ, req.Config, req.PlannedState, req.PriorState)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Apply Request", err)}, nil
	}
	config, planned, prior := vals[0], vals[1], vals[2]
	ident, err := identityOf(t, req.PlannedIdentity)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	null := tftypes.NewValue(t.rules.typ, nil)
	cfg := tfsdk.Config{Raw: config, Schema: t.spec.Schema}
	plan := tfsdk.Plan{Raw: planned, Schema: t.spec.Schema}
	reqIdent := func() *tfsdk.ResourceIdentity { return &tfsdk.ResourceIdentity{Raw: ident.Copy(), Schema: t.identity} }
	var state tfsdk.State
	var id *tfsdk.ResourceIdentity
	var d diag.Diagnostics
	switch {
	case prior.IsNull():
		cresp := resource.CreateResponse{State: tfsdk.State{Raw: null, Schema: t.spec.Schema}, Identity: reqIdent()}
		s.resource(t).Create(ctx, resource.CreateRequest{Config: cfg, Plan: plan, Identity: reqIdent()}, &cresp)
		state, id, d = cresp.State, cresp.Identity, cresp.Diagnostics
		private = nil // a create starts with no private state (fwserver CreateResource)
		d = applyChecks(d, "Create", "create", state.Raw.Equal(null), ident, id.Raw, false)
	case planned.IsNull():
		st := tfsdk.State{Raw: prior, Schema: t.spec.Schema}
		dresp := resource.DeleteResponse{State: st, Identity: reqIdent()}
		s.resource(t).Delete(ctx, resource.DeleteRequest{State: st, Identity: reqIdent()}, &dresp)
		state, id, d = dresp.State, dresp.Identity, dresp.Diagnostics
		if !d.HasError() {
			state.Raw, id.Raw, private = null, tftypes.NewValue(identityType, nil), nil
		}
	default:
		st := tfsdk.State{Raw: prior, Schema: t.spec.Schema}
		uresp := resource.UpdateResponse{State: st, Identity: reqIdent()}
		s.resource(t).Update(ctx, resource.UpdateRequest{Config: cfg, Plan: plan, State: st, Identity: reqIdent()}, &uresp)
		state, id, d = uresp.State, uresp.Identity, uresp.Diagnostics
		d = applyChecks(d, "Update", "update", state.Raw.Equal(null), ident, id.Raw, true)
	}
	resp := &tfprotov6.ApplyResourceChangeResponse{Private: private}
	resp.NewState, err = dynamicValue(t.rules.typ, state.Raw)
	d.Append(internalError(err)...)
	resp.NewIdentity, err = identityData(t, id.Raw)
	d.Append(internalError(err)...)
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
}

// applyChecks are the framework's checks after a create or an update
// (fwserver v1.19 CreateResource, UpdateResource), in its order: a null
// new state without an error, then, when no error: an identity that
// changed from a known planned one (an update only) and a null identity.
// op is "Create" or "Update", verb the word the framework's messages use.
func applyChecks(d diag.Diagnostics, op, verb string, nullState bool, planned, got tftypes.Value, update bool) diag.Diagnostics {
	if !d.HasError() && nullState {
		if update {
			d.AddError("Missing Resource State After Update", "The Terraform Provider unexpectedly returned no resource state after having no errors in the resource update. "+
				"This is always an issue in the Terraform Provider and should be reported to the provider developers.")
		} else {
			d.AddError("Missing Resource State After Create", "The Terraform Provider unexpectedly returned no resource state after having no errors in the resource creation. "+
				"This is always an issue in the Terraform Provider and should be reported to the provider developers.\n\n"+
				"The resource may have been successfully created, but Terraform is not tracking it. "+
				"Applying the configuration again with no other action may result in duplicate resource errors. "+
				"Import the resource if the resource was actually created and Terraform should be tracking it.")
		}
	}
	if d.HasError() {
		return d
	}
	if update && !planned.IsFullyNull() && !planned.Equal(got) {
		d.AddError("Unexpected Identity Change", "During the update operation, the Terraform Provider unexpectedly returned a different identity than the previously stored one.\n\n"+
			"This is always a problem with the provider and should be reported to the provider developer.\n\n"+
			fmt.Sprintf("Planned Identity: %s\n\n", planned.String())+fmt.Sprintf("New Identity: %s", got.String()))
		return d
	}
	if got.IsFullyNull() {
		d.AddError("Missing Resource Identity After "+op, "The Terraform Provider unexpectedly returned no resource identity data after having no errors in the resource "+verb+". "+
			"This is always an issue in the Terraform Provider and should be reported to the provider developers.")
	}
	return d
}
