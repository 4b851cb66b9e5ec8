package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
	"github.com/takoform/takoform/spaceid"
)

// ImportID is a parsed import identifier (spec/host-api-v1alpha3.md §1.6): NAME, SPACE/NAME,
// or a JSON object with the four FormRef members all or none.
type ImportID struct {
	Space string        // "" = the provider's space
	Ref   *form.FormRef // nil = the type's default create ref
	Name  string
}

type importJSON struct {
	Space             *string `json:"space"`
	APIVersion        *string `json:"apiVersion"`
	Kind              *string `json:"kind"`
	DefinitionVersion *string `json:"definitionVersion"`
	SchemaDigest      *string `json:"schemaDigest"`
	Name              string  `json:"name"`
}

// ParseImportID is THE import identifier parser. SPACE/NAME splits at the
// first '/' (a SpaceID cannot contain one); every part is validated by its
// one rule (spaceid, form.ValidateName, FormRef grammar).
func ParseImportID(id string) (ImportID, error) {
	var out ImportID
	switch {
	case strings.HasPrefix(id, "{"):
		var j importJSON
		if err := ijson.Unmarshal([]byte(id), &j); err != nil {
			return out, fmt.Errorf("import ID is not a valid JSON identity: %w", err)
		}
		parts := []*string{j.APIVersion, j.Kind, j.DefinitionVersion, j.SchemaDigest}
		set := 0
		for _, p := range parts {
			if p != nil {
				set++
			}
		}
		if set != 0 && set != 4 {
			return out, errors.New("a JSON import ID names all four FormRef members (apiVersion, kind, definitionVersion, schemaDigest) or none")
		}
		if set == 4 {
			ref := form.FormRef{APIVersion: *j.APIVersion, Kind: *j.Kind, DefinitionVersion: *j.DefinitionVersion, SchemaDigest: *j.SchemaDigest}
			if err := ref.Validate(); err != nil {
				return out, err
			}
			out.Ref = &ref
		}
		if j.Space != nil {
			if err := spaceid.Validate(*j.Space); err != nil {
				return out, err
			}
			out.Space = *j.Space
		}
		out.Name = j.Name
	case strings.Contains(id, "/"):
		i := strings.IndexByte(id, '/')
		out.Space, out.Name = id[:i], id[i+1:]
		if err := spaceid.Validate(out.Space); err != nil {
			return out, err
		}
	default:
		out.Name = id
	}
	if err := form.ValidateName(out.Name); err != nil {
		return out, err
	}
	return out, nil
}

// importState reads the existing resource by its exact identity — an
// import ID (`tofu import`, `import { id = … }`) or, when importID is
// empty, an import identity given (`import { identity = {…} }`,
// ImportIDFromIdentity; null when none) — and records its state and
// identity in resp. An ID or identity the one parser refuses is an error
// showing the accepted forms; a FormRef the build has no codec for is
// refused naming every ref the type supports, never re-bound to another
// ref (decision 0017; repo decision 0003).
func (r *Resource) importState(ctx context.Context, importID string, given tftypes.Value, resp *outcome) {
	var id ImportID
	var err error
	summary, code := "Invalid import ID", CodeImportID
	if importID == "" && !given.IsNull() {
		summary, code = "Invalid import identity", CodeImportIdentity
		var members map[string]any
		if members, err = attrsOf(given); err == nil {
			id, err = ImportIDFromIdentity(members)
		}
	} else {
		id, err = ParseImportID(importID)
	}
	if err != nil {
		resp.Diagnostics.Append(renderError(summary, err, identity{Type: r.spec.Name, Code: code})...)
		return
	}
	ref := r.spec.DefaultCreate
	if id.Ref != nil {
		ref = *id.Ref
	}
	c, ok := r.spec.Codec(ref)
	if !ok {
		resp.Diagnostics.Append(renderError("This provider build has no codec for the FormRef to import",
			fmt.Errorf("asked for %s; %s supports %s", ref, r.spec.Name, refList(r.spec.KnownRefs())),
			identity{Type: r.spec.Name, Name: id.Name, Form: &ref, Code: CodeUnknownFormRef})...)
		return
	}
	if !r.configured(&resp.Diagnostics) {
		return
	}
	space := id.Space
	if space == "" {
		space = r.data.Space
	}
	if id.Ref == nil {
		// NAME and SPACE/NAME bind to the create ref (spec/lane-v1beta1.md §13.7)
		var refusal *createRefusal
		if c, refusal = r.createCodec(ctx, nil, space); refusal != nil {
			resp.Diagnostics.Append(renderError("Cannot choose the family to import "+r.spec.Name+" from", refusal.err, identity{Type: r.spec.Name, Space: space, Name: id.Name, Code: refusal.code})...)
			return
		}
		ref = c.Ref
	}
	ident := identity{Type: r.spec.Name, Space: space, Name: id.Name, Form: &ref}
	if space == "" {
		resp.Diagnostics.Append(renderError("No space to import from", errors.New("the import ID names no space and the provider has none"), withCode(ident, CodeImportID))...)
		return
	}
	hc, err := r.data.clientFor(ctx, ref)
	if d := laneDiag(err, withCode(ident, CodeLaneUnavailable)); d != nil {
		resp.Diagnostics.Append(d...)
		return
	}
	res, err := hc.Read(ctx, client.Address{Space: space, Ref: ref, Name: id.Name})
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot import "+r.spec.Name, err, ident)...)
		return
	}
	seeds, d := r.importSeeds(ctx, c, res)
	if d.HasError() {
		resp.Diagnostics.Append(d...)
		return
	}
	resp.Diagnostics.Append(r.record(ctx, &resp.State, resp.Identity, answer{codec: c, res: res, attrs: seeds, id: ident})...)
}
