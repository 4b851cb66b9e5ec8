package provider

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestServerAnswersNoneAsTheFramework: our server itself (not the mux
// around it, which routes it none of these: repo decision 0070) and the
// framework answer alike, diagnostics included, what names nothing the
// registry serves — every resource RPC and both data-source RPCs for a
// type name the registry lacks; a function, ephemeral resource, list
// resource, action and state store of any name (streams read to their
// end) — and the requests the framework refuses before a type's code
// runs: a validation without configuration, a read without state (with
// and without a private state it refuses).
func TestServerAnswersNoneAsTheFramework(t *testing.T) {
	ctx := context.Background()
	for rname, m := range registries(t) {
		d := differential{reg: m.reg, fw: m.fw, srv: serverOf(t, m.srv)}
		const none = "takoform_none"
		typ := serverOf(t, m.srv).types[m.reg.names()[0]].rules.typ
		raw := &tfprotov6.RawState{JSON: []byte(`{}`)}
		empty := dynamicOf(t, tftypes.String, tftypes.NewValue(tftypes.String, nil))
		for what, call := range map[string]func(tfprotov6.ProviderServer) (any, error){
			"validate": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: none, Config: empty})
			},
			"plan": func(s tfprotov6.ProviderServer) (any, error) {
				return s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: none})
			},
			"apply": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: none})
			},
			"read": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: none, CurrentState: empty})
			},
			"import": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: none, ID: "s1/x"})
			},
			"upgrade": func(s tfprotov6.ProviderServer) (any, error) {
				return s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: none, RawState: raw})
			},
			"upgrade identity": func(s tfprotov6.ProviderServer) (any, error) {
				return s.UpgradeResourceIdentity(ctx, &tfprotov6.UpgradeResourceIdentityRequest{TypeName: none, RawIdentity: raw})
			},
			"move": func(s tfprotov6.ProviderServer) (any, error) {
				return s.MoveResourceState(ctx, &tfprotov6.MoveResourceStateRequest{TargetTypeName: none, SourceState: raw})
			},
			"generate config": func(s tfprotov6.ProviderServer) (any, error) {
				return s.GenerateResourceConfig(ctx, &tfprotov6.GenerateResourceConfigRequest{TypeName: none, State: empty})
			},
			"validate data": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: none, Config: empty})
			},
			"read data": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: none, Config: empty})
			},
			"functions": func(s tfprotov6.ProviderServer) (any, error) {
				return s.GetFunctions(ctx, &tfprotov6.GetFunctionsRequest{})
			},
			"call function": func(s tfprotov6.ProviderServer) (any, error) {
				return s.CallFunction(ctx, &tfprotov6.CallFunctionRequest{Name: "none"})
			},
			"validate ephemeral": func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateEphemeralResourceConfig(ctx, &tfprotov6.ValidateEphemeralResourceConfigRequest{TypeName: none})
			},
			"open ephemeral": func(s tfprotov6.ProviderServer) (any, error) {
				return s.OpenEphemeralResource(ctx, &tfprotov6.OpenEphemeralResourceRequest{TypeName: none})
			},
			"renew ephemeral": func(s tfprotov6.ProviderServer) (any, error) {
				return s.RenewEphemeralResource(ctx, &tfprotov6.RenewEphemeralResourceRequest{TypeName: none})
			},
			"close ephemeral": func(s tfprotov6.ProviderServer) (any, error) {
				return s.CloseEphemeralResource(ctx, &tfprotov6.CloseEphemeralResourceRequest{TypeName: none})
			},
			"validate list": func(s tfprotov6.ProviderServer) (any, error) {
				return lister(t, s).ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{TypeName: none})
			},
			"list": func(s tfprotov6.ProviderServer) (any, error) {
				return drained(lister(t, s).ListResource(ctx, &tfprotov6.ListResourceRequest{TypeName: none}))
			},
			"validate action": func(s tfprotov6.ProviderServer) (any, error) {
				return actor(t, s).ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: "none"})
			},
			"plan action": func(s tfprotov6.ProviderServer) (any, error) {
				return actor(t, s).PlanAction(ctx, &tfprotov6.PlanActionRequest{ActionType: "none"})
			},
			"invoke action": func(s tfprotov6.ProviderServer) (any, error) {
				return drained(actor(t, s).InvokeAction(ctx, &tfprotov6.InvokeActionRequest{ActionType: "none"}))
			},
			"validate state store": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).ValidateStateStoreConfig(ctx, &tfprotov6.ValidateStateStoreConfigRequest{TypeName: none})
			},
			"configure state store": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).ConfigureStateStore(ctx, &tfprotov6.ConfigureStateStoreRequest{TypeName: none})
			},
			"read state bytes": func(s tfprotov6.ProviderServer) (any, error) {
				return drained(storer(t, s).ReadStateBytes(ctx, &tfprotov6.ReadStateBytesRequest{TypeName: none, StateID: "default"}))
			},
			"write state bytes": func(s tfprotov6.ProviderServer) (any, error) {
				chunk := &tfprotov6.WriteStateBytesChunk{Meta: &tfprotov6.WriteStateChunkMeta{TypeName: none, StateID: "default"},
					StateByteChunk: tfprotov6.StateByteChunk{Bytes: []byte(`{}`), TotalLength: 2, Range: tfprotov6.StateByteRange{End: 1}}}
				return storer(t, s).WriteStateBytes(ctx, &tfprotov6.WriteStateBytesStream{Chunks: func(push func(*tfprotov6.WriteStateBytesChunk, []*tfprotov6.Diagnostic) bool) {
					push(chunk, nil)
				}})
			},
			"states": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).GetStates(ctx, &tfprotov6.GetStatesRequest{TypeName: none})
			},
			"delete state": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).DeleteState(ctx, &tfprotov6.DeleteStateRequest{TypeName: none, StateID: "default"})
			},
			"lock state": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).LockState(ctx, &tfprotov6.LockStateRequest{TypeName: none, StateID: "default"})
			},
			"unlock state": func(s tfprotov6.ProviderServer) (any, error) {
				return storer(t, s).UnlockState(ctx, &tfprotov6.UnlockStateRequest{TypeName: none, StateID: "default", LockID: "l"})
			},
		} {
			compare(t, rname+" "+what+" of none", typ, d, call)
		}
		for _, name := range m.reg.names() {
			typ := serverOf(t, m.srv).types[name].rules.typ
			compare(t, rname+" "+name+" validate without configuration", typ, d, func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: name})
			})
			compare(t, rname+" "+name+" validate data without configuration", typ, d, func(s tfprotov6.ProviderServer) (any, error) {
				return s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: name})
			})
			for pname, private := range map[string][]byte{"none": nil, "import marker": importMarked, "refused": []byte(`[1]`)} {
				compare(t, rname+" "+name+" read without state, private "+pname, typ, d, func(s tfprotov6.ProviderServer) (any, error) {
					return s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: name, Private: private})
				})
			}
		}
	}
}

// drained is a stream answer read to its end.
func drained(v any, err error) (any, error) {
	switch x := v.(type) {
	case *tfprotov6.ListResourceServerStream:
		return slices.Collect(x.Results), err
	case *tfprotov6.InvokeActionServerStream:
		return slices.Collect(x.Events), err
	case *tfprotov6.ReadStateBytesStream:
		return slices.Collect(x.Chunks), err
	}
	return v, err
}

func lister(t *testing.T, s tfprotov6.ProviderServer) tfprotov6.ProviderServerWithListResource {
	t.Helper()
	l, ok := s.(tfprotov6.ProviderServerWithListResource)
	if !ok {
		t.Fatalf("%T serves no list resources", s)
	}
	return l
}

func actor(t *testing.T, s tfprotov6.ProviderServer) tfprotov6.ProviderServerWithActions {
	t.Helper()
	a, ok := s.(tfprotov6.ProviderServerWithActions)
	if !ok {
		t.Fatalf("%T serves no actions", s)
	}
	return a
}

func storer(t *testing.T, s tfprotov6.ProviderServer) tfprotov6.ProviderServerWithStateStores {
	t.Helper()
	st, ok := s.(tfprotov6.ProviderServerWithStateStores)
	if !ok {
		t.Fatalf("%T serves no state stores", s)
	}
	return st
}
