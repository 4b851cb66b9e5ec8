package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The RPCs of the kinds our server serves none of — functions, ephemeral
// resources, list resources, actions, state stores — answered as
// terraform-plugin-framework v1.19 answers a name its provider lacks
// (fwserver's EphemeralResource, Function, ListResourceType, Action,
// StateStore; proto6server's conversions), and a resource type or data
// source the registry lacks likewise (fwserver's Resource, DataSource).
// Mux routes none of these to our server (repo decision 0070: it routes
// by the type names our server lists and answers a name no server lists
// itself); they are answered so that our server stands alone as a
// tfprotov6.ProviderServer, and TestServerAnswersNoneAsTheFramework holds
// them to the framework's answers.

// notFound is the framework's error for a name of kind (as its summary
// names it, "Resource Type") the provider lacks.
func notFound(kind, what, name string) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: kind + " Not Found",
		Detail: fmt.Sprintf("No %s named %q was found in the provider.", what, name)}}
}

func resourceNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("Resource Type", "resource type", name)
}

func dataSourceNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("Data Source Type", "data source type", name)
}

func ephemeralNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("Ephemeral Resource Type", "ephemeral resource type", name)
}

func listNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("List Resource Type", "list resource type", name)
}

func actionNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("Action Type", "action type", name)
}

func stateStoreNotFound(name string) []*tfprotov6.Diagnostic {
	return notFound("State Store Type", "state store type", name)
}

// GetFunctions lists none.
func (s *protoServer) GetFunctions(context.Context, *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return &tfprotov6.GetFunctionsResponse{Functions: map[string]*tfprotov6.Function{}}, nil
}

// CallFunction is the framework's function error for a name it lacks.
func (s *protoServer) CallFunction(_ context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return &tfprotov6.CallFunctionResponse{Error: &tfprotov6.FunctionError{
		Text: fmt.Sprintf("Function Not Found: No function named %q was found in the provider.", req.Name)}}, nil
}

// ValidateEphemeralResourceConfig finds no ephemeral resource type.
func (s *protoServer) ValidateEphemeralResourceConfig(_ context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return &tfprotov6.ValidateEphemeralResourceConfigResponse{Diagnostics: ephemeralNotFound(req.TypeName)}, nil
}

// OpenEphemeralResource finds no ephemeral resource type.
func (s *protoServer) OpenEphemeralResource(_ context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return &tfprotov6.OpenEphemeralResourceResponse{Diagnostics: ephemeralNotFound(req.TypeName)}, nil
}

// RenewEphemeralResource finds no ephemeral resource type.
func (s *protoServer) RenewEphemeralResource(_ context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return &tfprotov6.RenewEphemeralResourceResponse{Diagnostics: ephemeralNotFound(req.TypeName)}, nil
}

// CloseEphemeralResource finds no ephemeral resource type.
func (s *protoServer) CloseEphemeralResource(_ context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return &tfprotov6.CloseEphemeralResourceResponse{Diagnostics: ephemeralNotFound(req.TypeName)}, nil
}

// ValidateListResourceConfig finds no list resource type.
func (s *protoServer) ValidateListResourceConfig(_ context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return &tfprotov6.ValidateListResourceConfigResponse{Diagnostics: listNotFound(req.TypeName)}, nil
}

// ListResource streams one result, the error of finding no list
// resource type.
func (s *protoServer) ListResource(_ context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	d := listNotFound(req.TypeName)
	return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
		push(tfprotov6.ListResourceResult{Diagnostics: d})
	}}, nil
}

// ValidateActionConfig finds no action type.
func (s *protoServer) ValidateActionConfig(_ context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return &tfprotov6.ValidateActionConfigResponse{Diagnostics: actionNotFound(req.ActionType)}, nil
}

// PlanAction finds no action type.
func (s *protoServer) PlanAction(_ context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return &tfprotov6.PlanActionResponse{Diagnostics: actionNotFound(req.ActionType)}, nil
}

// InvokeAction streams one completed event, the error of finding no
// action type.
func (s *protoServer) InvokeAction(_ context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	d := actionNotFound(req.ActionType)
	return &tfprotov6.InvokeActionServerStream{Events: func(push func(tfprotov6.InvokeActionEvent) bool) {
		push(tfprotov6.InvokeActionEvent{Type: tfprotov6.CompletedInvokeActionEventType{Diagnostics: d}})
	}}, nil
}

// ValidateStateStoreConfig finds no state store type.
func (s *protoServer) ValidateStateStoreConfig(_ context.Context, req *tfprotov6.ValidateStateStoreConfigRequest) (*tfprotov6.ValidateStateStoreConfigResponse, error) {
	return &tfprotov6.ValidateStateStoreConfigResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}

// ConfigureStateStore finds no state store type.
func (s *protoServer) ConfigureStateStore(_ context.Context, req *tfprotov6.ConfigureStateStoreRequest) (*tfprotov6.ConfigureStateStoreResponse, error) {
	return &tfprotov6.ConfigureStateStoreResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}

// ReadStateBytes streams one chunk, the error of finding no state store
// type.
func (s *protoServer) ReadStateBytes(_ context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	d := stateStoreNotFound(req.TypeName)
	return &tfprotov6.ReadStateBytesStream{Chunks: func(push func(tfprotov6.ReadStateByteChunk) bool) {
		push(tfprotov6.ReadStateByteChunk{Diagnostics: d})
	}}, nil
}

// WriteStateBytes is the framework's first check, before it reads the
// stream: no state store was configured, so no chunk size was agreed.
func (s *protoServer) WriteStateBytes(context.Context, *tfprotov6.WriteStateBytesStream) (*tfprotov6.WriteStateBytesResponse, error) {
	return &tfprotov6.WriteStateBytesResponse{Diagnostics: []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "Error Writing State",
		Detail: "The provider server does not have a chunk size configured. This is a bug in either Terraform core or terraform-plugin-framework and should be reported."}}}, nil
}

// GetStates finds no state store type.
func (s *protoServer) GetStates(_ context.Context, req *tfprotov6.GetStatesRequest) (*tfprotov6.GetStatesResponse, error) {
	return &tfprotov6.GetStatesResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}

// DeleteState finds no state store type.
func (s *protoServer) DeleteState(_ context.Context, req *tfprotov6.DeleteStateRequest) (*tfprotov6.DeleteStateResponse, error) {
	return &tfprotov6.DeleteStateResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}

// LockState finds no state store type.
func (s *protoServer) LockState(_ context.Context, req *tfprotov6.LockStateRequest) (*tfprotov6.LockStateResponse, error) {
	return &tfprotov6.LockStateResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}

// UnlockState finds no state store type.
func (s *protoServer) UnlockState(_ context.Context, req *tfprotov6.UnlockStateRequest) (*tfprotov6.UnlockStateResponse, error) {
	return &tfprotov6.UnlockStateResponse{Diagnostics: stateStoreNotFound(req.TypeName)}, nil
}
