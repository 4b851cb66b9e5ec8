package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// UpgradeResourceState is the framework's UpgradeResourceState (fwserver
// v1.19, repo decision 0066). At the schema's own version: the JSON read
// with the current type, attributes the schema no longer has ignored. At
// an earlier version: the JSON read with that version's frozen layout
// (priorLayout) and upgraded (Resource.upgrade, decision 0030); a version
// without a frozen layout, prior JSON that does not read, or an upgrade
// that returns no state is the framework's error.
func (s *protoServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	if req.RawState == nil {
		return &tfprotov6.UpgradeResourceStateResponse{}, nil
	}
	fail := func(d diag.Diagnostics) (*tfprotov6.UpgradeResourceStateResponse, error) {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: protoDiagnostics(d)}, nil
	}
	var d diag.Diagnostics
	if req.Version == t.spec.Schema.Version {
		v, err := stateFromJSON(t.rules.typ, req.RawState)
		if err != nil {
			d.AddError("Unable to Read Previously Saved State for UpgradeResourceState",
				"There was an error reading the saved resource state using the current resource schema.\n\n"+
					"If this resource state was last refreshed with Terraform CLI 0.11 and earlier, it must be refreshed or applied with an older provider version first. "+
					"If you manually modified the resource state, you will need to manually modify it to match the current resource schema. "+
					"Otherwise, please report this to the provider developer:\n\n"+err.Error())
			return fail(d)
		}
		return upgraded(t, v, d)
	}
	r := s.resource(t)
	layout, ok := r.priorLayout(req.Version)
	if !ok {
		d.AddError("Unable to Upgrade Resource State", "This resource was implemented with an UpgradeState() method, "+
			fmt.Sprintf("however Terraform was expecting an implementation for version %d upgrade.\n\n", req.Version)+
			"This is always an issue with the Terraform Provider and should be reported to the provider developer.")
		return fail(d)
	}
	old, err := req.RawState.UnmarshalWithOpts(layout,
		tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		d.AddError("Unable to Read Previously Saved State for UpgradeResourceState",
			fmt.Sprintf("There was an error reading the saved resource state using the prior resource schema defined for version %d upgrade.\n\n", req.Version)+
				"Please report this to the provider developer:\n\n"+err.Error())
		return fail(d)
	}
	uresp := outcome{}
	r.upgrade(ctx, req.Version, old, &uresp)
	d = uresp.Diagnostics
	if d.HasError() {
		return fail(d)
	}
	if uresp.State.Type() == nil || uresp.State.IsNull() {
		d.AddError("Missing Upgraded Resource State", fmt.Sprintf("After attempting a resource state upgrade to version %d, the provider did not return any state data. ", req.Version)+
			"Preventing the unexpected loss of resource state data. "+
			"This is always an issue with the Terraform Provider and should be reported to the provider developer.")
		return fail(d)
	}
	return upgraded(t, uresp.State, d)
}

// upgraded is the answer carrying the upgraded state v and d.
func upgraded(t *protoType, v tftypes.Value, d diag.Diagnostics) (*tfprotov6.UpgradeResourceStateResponse, error) {
	dv, err := dynamicValue(t.rules.typ, v)
	d.Append(internalError(err)...)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: dv, Diagnostics: protoDiagnostics(d)}, nil
}

// UpgradeResourceIdentity is the framework's UpgradeResourceIdentity
// (fwserver v1.19): the identity has one version (0) and no upgraders, so
// a request at version 0 is an unexpected one and any other version has
// no upgrader; no raw identity answers nothing.
func (s *protoServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	resp := &tfprotov6.UpgradeResourceIdentityResponse{}
	if req.RawIdentity == nil {
		return resp, nil
	}
	var d diag.Diagnostics
	if req.Version == identityVersion {
		d.AddError("Unexpected Identity Upgrade Request", "Terraform Core invoked UpgradeResourceIdentity even though the stored identity schema version matches the current version. "+
			"This likely indicates a bug in the Terraform provider framework or Terraform Core. "+
			"Please report this issue to the provider developer.")
	} else {
		d.AddError("Unable to Upgrade Resource Identity", "This resource was implemented without an UpgradeResourceIdentity() method, "+
			fmt.Sprintf("however Terraform was expecting an implementation for version %d upgrade.\n\n", req.Version)+
			"This is always an issue with the Terraform Provider and should be reported to the provider developer.")
	}
	resp.Diagnostics = protoDiagnostics(d)
	return resp, nil
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
