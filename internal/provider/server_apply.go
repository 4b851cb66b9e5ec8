package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ApplyResourceChange is the framework's ApplyResourceChange (fwserver
// v1.19, repo decision 0066): create when the prior state is null, destroy
// when the planned state is null, update otherwise, each then checked as
// the framework checks it (applyChecks); the planned private state is
// carried by an update and a delete that failed, and dropped by a create
// and a delete that succeeded.
func (s *protoServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	private, pd := carriedPrivate(req.PlannedPrivate)
	if pd.HasError() {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoDiagnostics(pd)}, nil
	}
	vals, err := valuesOf(t.rules.typ, req.Config, req.PlannedState, req.PriorState)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Apply Request", err)}, nil
	}
	planned, prior := vals[1], vals[2] // the configuration decodes, as the framework's does; the operations read the plan
	ident, err := identityOf(t, req.PlannedIdentity)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	null := tftypes.NewValue(t.rules.typ, nil)
	id := ident
	out := outcome{Identity: &id}
	switch {
	case prior.IsNull():
		out.State = null
		s.resource(t).create(ctx, planned, &out)
		private = nil // a create starts with no private state (fwserver CreateResource)
		out.Diagnostics = applyChecks(out.Diagnostics, "Create", "create", out.State.Equal(null), ident, id, false)
	case planned.IsNull():
		out.State = prior
		s.resource(t).destroy(ctx, prior, &out)
		if !out.Diagnostics.HasError() {
			out.State, id, private = null, tftypes.NewValue(identityType, nil), nil
		}
	default:
		out.State = prior
		s.resource(t).update(ctx, planned, prior, &out)
		out.Diagnostics = applyChecks(out.Diagnostics, "Update", "update", out.State.Equal(null), ident, id, true)
	}
	d := out.Diagnostics
	resp := &tfprotov6.ApplyResourceChangeResponse{Private: private}
	resp.NewState, err = dynamicValue(t.rules.typ, out.State)
	d.Append(internalError(err)...)
	resp.NewIdentity, err = identityData(t, id)
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
