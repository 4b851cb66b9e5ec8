package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Resource identity (OpenTofu 1.12 `import { identity = {…} }`,
// terraform-plugin-framework resource identity; spec/host-api-v1alpha3.md §1.6, repo decision
// 0003): the exact address of one resource — its space, the four members
// of the FormRef it is bound to, and its name. The framework admits only
// lowercase attribute names, so the FormRef members are spelled
// api_version, kind, definition_version and schema_digest; each maps 1:1
// onto the JSON import ID's member.

// identityMember maps one identity attribute to its JSON import ID member
// and the envelope member that records it.
type identityMember struct {
	attr, json string
	state      func(envelope) string
	doc        string
}

var identityMembers = []identityMember{
	{"space", "space", func(e envelope) string { return e.Space }, "SpaceID of the resource; the provider's space when omitted on import."},
	{"api_version", "apiVersion", func(e envelope) string { return e.Ref.APIVersion }, "FormRef apiVersion (Form group) the resource is bound to."},
	{"kind", "kind", func(e envelope) string { return e.Ref.Kind }, "FormRef kind."},
	{"definition_version", "definitionVersion", func(e envelope) string { return e.Ref.DefinitionVersion }, "FormRef definitionVersion."},
	{"schema_digest", "schemaDigest", func(e envelope) string { return e.Ref.SchemaDigest }, "FormRef schemaDigest."},
	{"name", "name", func(e envelope) string { return e.Name }, "metadata.name of the resource."},
}

// identityType is the identity's Terraform object type: one string per
// member, as IdentitySchema declares them (TestIdentityTypeIsTheSchemas).
var identityType = func() tftypes.Object {
	attrs := map[string]tftypes.Type{}
	for _, m := range identityMembers {
		attrs[m.attr] = tftypes.String
	}
	return tftypes.Object{AttributeTypes: attrs}
}()

var _ resource.ResourceWithIdentity = (*Resource)(nil)

// identityVersion is the identity schema's version: the identity has had
// one layout, so it has no upgraders.
const identityVersion = 0

// IdentitySchema declares the identity: name is required on import; space
// and the four FormRef members are optional there, the FormRef members all
// or none (omitted: the type's default create ref). create, read, update
// and importState always record every member.
func (r *Resource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	attrs := map[string]identityschema.Attribute{}
	for _, m := range identityMembers {
		attrs[m.attr] = identityschema.StringAttribute{RequiredForImport: m.attr == "name", OptionalForImport: m.attr != "name", Description: m.doc}
	}
	resp.IdentitySchema = identityschema.Schema{Attributes: attrs, Version: identityVersion}
}

// setIdentity records in id the identity of the resource whose envelope is
// e (a no-op when id is nil: the caller records no identity).
func (r *Resource) setIdentity(ctx context.Context, id *tftypes.Value, e envelope) diag.Diagnostics {
	if id == nil {
		return nil
	}
	m := map[string]any{}
	for _, mem := range identityMembers {
		m[mem.attr] = nilIfEmpty(mem.state(e))
	}
	v, err := fromGo(identityType, m)
	if err != nil {
		return renderError("Cannot record the resource identity", err, identity{Type: r.spec.Name, Code: CodeInternal})
	}
	*id = v
	return nil
}

// ImportIDFromIdentity turns the members of an import identity (attribute
// name → string or nil) into an ImportID through THE import parser: it
// builds the equivalent JSON import ID object and calls ParseImportID, so
// identities obey exactly the import ID rules (FormRef members all or none,
// the SpaceID rule, the name rule). A member that is not a known string is
// an error, never a default.
func ImportIDFromIdentity(members map[string]any) (ImportID, error) {
	obj := map[string]string{}
	for _, m := range identityMembers {
		switch v := members[m.attr].(type) {
		case nil:
		case string:
			if !utf8.ValidString(v) {
				return ImportID{}, fmt.Errorf("identity member %s is not valid UTF-8", m.attr)
			}
			obj[m.json] = v
		default:
			return ImportID{}, fmt.Errorf("identity member %s is not a known string", m.attr)
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return ImportID{}, err
	}
	return ParseImportID(string(b))
}
