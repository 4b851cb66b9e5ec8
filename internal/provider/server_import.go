package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// importMarker is the framework's private-state key that marks a state
// as just imported (terraform-plugin-framework v1.19
// privatestate.ImportBeforeReadKey): the read that follows may change
// the identity, and drops the marker.
const importMarker = ".import_before_read"

// ImportResourceState is the framework's ImportResourceState (fwserver
// v1.19, repo decision 0066): importState with a null state and the
// identity sent (null when none), then the framework's check that an
// import by ID recorded a state; the one imported resource carries the
// import marker as its private state.
func (s *protoServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	t := s.types[req.TypeName]
	if t == nil {
		return &tfprotov6.ImportResourceStateResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	}
	ident, err := identityOf(t, req.Identity)
	if err != nil {
		return &tfprotov6.ImportResourceStateResponse{Diagnostics: protoError("Unable to Convert Identity", err)}, nil
	}
	null := tftypes.NewValue(t.rules.typ, nil)
	newIdent := ident
	iresp := outcome{State: null, Identity: &newIdent}
	s.resource(t).importState(ctx, req.ID, ident, &iresp)
	d := iresp.Diagnostics
	if !d.HasError() && req.ID != "" && iresp.State.Equal(null) {
		d.AddError("Missing Resource Import State", "An unexpected error was encountered when importing the resource. This is always a problem with the provider. Please give the following information to the provider developer:\n\n"+
			"Resource ImportState method returned no State in response. If import is intentionally not supported, remove the Resource type ImportState method or return an error.")
	}
	if d.HasError() {
		return &tfprotov6.ImportResourceStateResponse{Diagnostics: protoDiagnostics(d)}, nil
	}
	imported := &tfprotov6.ImportedResource{TypeName: req.TypeName}
	imported.State, err = dynamicValue(t.rules.typ, iresp.State)
	d.Append(internalError(err)...)
	imported.Identity, err = identityData(t, newIdent)
	d.Append(internalError(err)...)
	imported.Private, _ = encodePrivate(map[string][]byte{importMarker: []byte(`true`)})
	return &tfprotov6.ImportResourceStateResponse{ImportedResources: []*tfprotov6.ImportedResource{imported}, Diagnostics: protoDiagnostics(d)}, nil
}

// readPrivate is the private state a read answers (the one sent without
// the import marker) and whether the marker was there.
func readPrivate(b []byte) ([]byte, bool, diag.Diagnostics) {
	m, d := decodePrivate(b)
	if d.HasError() {
		return nil, false, d
	}
	_, marked := m[importMarker]
	delete(m, importMarker)
	out, ed := encodePrivate(m)
	return out, marked, append(d, ed...)
}

// carriedPrivate is the private state a plan or apply carries: the one
// sent, decoded and encoded again as the framework does.
func carriedPrivate(b []byte) ([]byte, diag.Diagnostics) {
	m, d := decodePrivate(b)
	if d.HasError() {
		return nil, d
	}
	out, ed := encodePrivate(m)
	return out, append(d, ed...)
}

// decodePrivate reads a private state as the framework does
// (privatestate.NewData, v1.19): a JSON object of base64 strings, each
// valid UTF-8 JSON; nothing is nil; a JSON object of another shape is
// discarded; anything else is an error.
func decodePrivate(b []byte) (map[string][]byte, diag.Diagnostics) {
	var d diag.Diagnostics
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string][]byte
	if err := json.Unmarshal(b, &m); err != nil {
		if json.Unmarshal(b, new(map[string]any)) == nil {
			return nil, nil
		}
		d.AddError("Error Decoding Private State", fmt.Sprintf("An error was encountered when decoding private state: %s.\n\n", err)+
			"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")
		return nil, d
	}
	for k, v := range m {
		switch {
		case !utf8.Valid(v):
			d.AddError("Error Decoding Private State", "An error was encountered when validating private state value.\n"+
				fmt.Sprintf("The value being supplied for key %q is is not valid UTF-8.\n\n", k)+
				"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")
		case !json.Valid(v):
			d.AddError("Error Decoding Private State", "An error was encountered when validating private state value.\n"+
				fmt.Sprintf("The value being supplied for key %q is is not valid JSON.\n\n", k)+
				"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")
		}
	}
	if d.HasError() {
		return nil, d
	}
	return m, nil
}

// encodePrivate writes a private state as the framework does
// (privatestate.Data.Bytes, v1.19): nil when it holds nothing, else the
// JSON object of its non-empty values.
func encodePrivate(m map[string][]byte) ([]byte, diag.Diagnostics) {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		if len(v) > 0 {
			out[k] = v
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Error Encoding Private State", fmt.Sprintf("An error was encountered when encoding private state: %s.\n\n", err)+
			"This is always a problem with Terraform or terraform-plugin-framework. Please report this to the provider developer.")
		return nil, d
	}
	return b, nil
}
