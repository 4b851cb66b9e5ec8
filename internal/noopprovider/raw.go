package noopprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// RawType is the resource type served without the plugin framework.
const RawType = "noop_raw"

// NewServer returns the noop provider's plugin server: the framework
// provider (noop_thing, noop_wide) with noop_raw beside it. noop_raw has
// noop_wide's schema (and so takoform_edge_kv_namespace's shape) but its
// RPCs are answered here, on terraform-plugin-go alone: planning marks
// the computed attributes of a create unknown, apply fills them with
// constants, read returns the state it was given; each resource carries
// the kv namespace's identity shape (rawidentity.go). It bounds what OpenTofu
// alone costs for a schema that wide (scripts/bench-provider.sh), apart
// from the framework's own per-attribute work.
func NewServer() (tfprotov6.ProviderServer, error) {
	fw, err := providerserver.NewProtocol6WithError(New())()
	if err != nil {
		return nil, err
	}
	resp, err := fw.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, err
	}
	s := resp.ResourceSchemas["noop_wide"]
	if s == nil {
		return nil, fmt.Errorf("noop provider: no noop_wide schema to copy")
	}
	typ, ok := s.ValueType().(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("noop provider: noop_wide's schema is a %s, not an object", s.ValueType())
	}
	return &rawServer{ProviderServer: fw, schema: s, typ: typ}, nil
}

// rawServer answers noop_raw's RPCs and hands every other one to the
// framework server it embeds.
type rawServer struct {
	tfprotov6.ProviderServer
	schema *tfprotov6.Schema
	typ    tftypes.Object
}

func (r *rawServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := r.ProviderServer.GetProviderSchema(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.ResourceSchemas[RawType] = r.schema
	return resp, nil
}

func (r *rawServer) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	resp, err := r.ProviderServer.GetMetadata(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.Resources = append(resp.Resources, tfprotov6.ResourceMetadata{TypeName: RawType})
	return resp, nil
}

func (r *rawServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (r *rawServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.UpgradeResourceState(ctx, req)
	}
	v, err := req.RawState.Unmarshal(r.typ)
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: fail(err)}, nil
	}
	dv, err := tfprotov6.NewDynamicValue(r.typ, v)
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: fail(err)}, nil
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, nil
}

func (r *rawServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.ReadResource(ctx, req)
	}
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
}

func (r *rawServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.PlanResourceChange(ctx, req)
	}
	proposed, err := req.ProposedNewState.Unmarshal(r.typ)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	prior, err := req.PriorState.Unmarshal(r.typ)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	id, err := plannedIdentity(req.PriorIdentity)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate, PlannedIdentity: id}
	if proposed.IsNull() || !prior.IsNull() {
		// A destroy, or an update: the proposed state already carries the
		// prior computed values; a new name or space replaces.
		if !proposed.IsNull() {
			for _, n := range wideReplace {
				if !equalAttr(proposed, prior, n) {
					resp.RequiresReplace = append(resp.RequiresReplace, tftypes.NewAttributePath().WithAttributeName(n))
				}
			}
		}
		return resp, nil
	}
	planned, err := r.fill(proposed, func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) })
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	dv, err := tfprotov6.NewDynamicValue(r.typ, planned)
	if err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	resp.PlannedState = &dv
	return resp, nil
}

func (r *rawServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.ApplyResourceChange(ctx, req)
	}
	planned, err := req.PlannedState.Unmarshal(r.typ)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	if planned.IsNull() {
		id, err := identityData(tftypes.NewValue(rawIdentityType, nil))
		if err != nil {
			return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: fail(err)}, nil
		}
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PlannedState, NewIdentity: id}, nil
	}
	state, err := r.fill(planned, constant)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	dv, err := tfprotov6.NewDynamicValue(r.typ, state)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	id, err := appliedIdentity(state)
	if err != nil {
		return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: fail(err)}, nil
	}
	return &tfprotov6.ApplyResourceChangeResponse{NewState: &dv, Private: req.PlannedPrivate, NewIdentity: id}, nil
}

func (r *rawServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	if req.TypeName != RawType {
		return r.ProviderServer.ImportResourceState(ctx, req)
	}
	return &tfprotov6.ImportResourceStateResponse{Diagnostics: fail(fmt.Errorf("%s cannot be imported", RawType))}, nil
}

// fill gives each computed attribute of obj that is null or unknown the
// value with(its type) returns: unknown when planning a create, a constant
// when applying it (except wideNull's, which an applied resource leaves
// null).
func (r *rawServer) fill(obj tftypes.Value, with func(tftypes.Type) tftypes.Value) (tftypes.Value, error) {
	var attrs map[string]tftypes.Value
	if err := obj.As(&attrs); err != nil {
		return tftypes.Value{}, err
	}
	for _, a := range r.schema.Block.Attributes {
		if !a.Computed {
			continue
		}
		v := attrs[a.Name]
		if v.IsNull() || !v.IsKnown() {
			attrs[a.Name] = with(r.typ.AttributeTypes[a.Name])
			if wideNull[a.Name] && attrs[a.Name].IsKnown() {
				attrs[a.Name] = tftypes.NewValue(r.typ.AttributeTypes[a.Name], nil)
			}
		}
	}
	return tftypes.NewValue(r.typ, attrs), nil
}

// rawString is the value apply gives a computed string attribute: 20
// bytes, so that noop_raw's state after apply holds about as many bytes
// as takoform_edge_kv_namespace's, whose computed strings are UIDs,
// digests, FormRef members and timestamps (3.22 MB against 3.20 MB at
// 2,000 resources). OpenTofu's own CPU grows with the bytes of the state
// it holds (PERFORMANCE.md, log entry "`noop_raw` holds as much state as
// takoform").
const rawString = "abcdefghijklmnopqrst"

// constant is the value apply gives a computed attribute of type t.
func constant(t tftypes.Type) tftypes.Value {
	switch {
	case t.Is(tftypes.String):
		return tftypes.NewValue(t, rawString)
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, true)
	case t.Is(tftypes.List{}):
		list, _ := t.(tftypes.List) // t.Is(tftypes.List{}) holds
		obj, ok := list.ElementType.(tftypes.Object)
		if !ok {
			return tftypes.NewValue(t, []tftypes.Value{})
		}
		members := map[string]tftypes.Value{}
		for n, at := range obj.AttributeTypes {
			members[n] = constant(at)
		}
		return tftypes.NewValue(t, []tftypes.Value{tftypes.NewValue(obj, members)})
	}
	return tftypes.NewValue(t, nil)
}

// equalAttr reports whether objects a and b hold equal values at name.
func equalAttr(a, b tftypes.Value, name string) bool {
	var am, bm map[string]tftypes.Value
	if a.As(&am) != nil || b.As(&bm) != nil {
		return false
	}
	return am[name].Equal(bm[name])
}

func fail(err error) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "noop_raw", Detail: err.Error()}}
}
