package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ValidateResourceConfig is the framework's (fwserver v1.19
// SchemaValidate) for a schema without validators, which is every schema
// with plan rules (planRulesOf): each attribute, and each nested one of a
// configured list of objects, is checked for a value set on a read-only
// attribute, a missing required value and a deprecated attribute set;
// the nested ones of a configured single object likewise.
func (s *protoServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	t := s.types[req.TypeName]
	switch {
	case t == nil:
		return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: resourceNotFound(req.TypeName)}, nil
	case req.Config == nil:
		return &tfprotov6.ValidateResourceConfigResponse{}, nil // the framework validates no configuration
	}
	config, err := req.Config.Unmarshal(t.rules.typ)
	if err != nil {
		return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: protoError("Unable to Convert Configuration", err)}, nil
	}
	var d diag.Diagnostics
	validateAttrs(t.rules.attrs, membersOf(t.rules.attrs, config), path.Empty(), &d)
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: protoDiagnostics(d)}, nil
}

// validateAttrs checks the attributes of one configured object, at p.
func validateAttrs(rules map[string]*planAttr, attrs map[string]tftypes.Value, p path.Path, d *diag.Diagnostics) {
	for name, a := range rules {
		validateAttr(a, attrs[name], p.AtName(name), d)
	}
}

func validateAttr(a *planAttr, v tftypes.Value, p path.Path, d *diag.Diagnostics) {
	null, unknown := v.IsNull(), !v.IsKnown()
	if a.Computed && !a.Optional && !null {
		d.AddAttributeError(p, "Invalid Configuration for Read-Only Attribute",
			"Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\n"+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported.")
	}
	if a.Required && null {
		d.AddAttributeError(p, "Missing Configuration for Required Attribute",
			fmt.Sprintf("Must set a configuration value for the %s attribute as the provider has marked it as required.\n\n", p)+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable attributes that are required.")
	}
	if a.nested != nil && a.single() && !null && !unknown {
		validateAttrs(a.nested, membersOf(a.nested, v), p, d)
	} else if a.nested != nil && !null && !unknown {
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			d.AddAttributeError(p, "Attribute Validation Error Invalid Value Type", err.Error())
			return
		}
		for i, e := range elems {
			validateAttrs(a.nested, membersOf(a.nested, e), p.AtListIndex(i), d)
		}
	}
	if a.Deprecation != "" && !null && !unknown {
		d.AddAttributeWarning(p, "Attribute Deprecated", a.Deprecation)
	}
}

// membersOf are the members of the object v as the framework reads them
// at each attribute's path: a known object's own, else null (the
// framework reads a member of an unknown object as null too).
func membersOf(rules map[string]*planAttr, v tftypes.Value) map[string]tftypes.Value {
	var attrs map[string]tftypes.Value
	if v.IsKnown() && !v.IsNull() && v.As(&attrs) == nil {
		return attrs
	}
	out := make(map[string]tftypes.Value, len(rules))
	for name, a := range rules {
		out[name] = tftypes.NewValue(a.typ, nil)
	}
	return out
}
