package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/spaceid"
)

// modifyPlan fills the space from the provider, derives revision names,
// hashes local bundle files, keeps host-reported attributes of unchanged
// resources, and refuses at plan time what the host would refuse: schema
// and family rules, revision replacement under a pinned name, and
// capabilities the host's support profiles deny (spec/host-api-v1alpha3.md §6.4, §8.2).
// configured, planned and prior are the configuration, the plan so far
// (planRules.plan) and the prior state; resp starts with planned and
// gets the plan, the paths that require replacement and diagnostics.
func (r *Resource) modifyPlan(ctx context.Context, configured, planned, prior tftypes.Value, resp *planOutcome) {
	if planned.IsNull() {
		return
	}
	plan, err1 := attrsOf(planned)
	config, err2 := attrsOf(configured)
	if err := errors.Join(err1, err2); err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})...)
		return
	}
	var state map[string]any
	var es envelope
	var c *Codec // the recorded ref's; for a create, createCodec's once the space is settled
	if !prior.IsNull() {
		if state, err1 = attrsOf(prior); err1 != nil {
			resp.Diagnostics.Append(renderError("Cannot read state", err1, identity{Type: r.spec.Name, Code: CodeInternal})...)
			return
		}
		// the recorded FormRef, never the default create codec: a plan
		// that skipped refresh (-refresh=false) fails closed as read does
		es = envelopeOf(state)
		sc, d := r.stateCodec(es)
		if d.HasError() {
			resp.Diagnostics.Append(d...)
			return
		}
		c = sc
	}
	ep := envelopeOf(plan)
	d := r.planSpace(&ep, es, plan, config, state, resp)
	if c == nil {
		var refusal *createRefusal
		c, refusal = r.createCodec(ctx, plan, ep.Space)
		if refusal != nil {
			resp.Diagnostics.Append(d...)
			resp.Diagnostics.Append(renderError("Cannot choose the family to create "+r.spec.Name+" in", refusal.err, withCode(ep.identity(r.spec.Name, nil), refusal.code))...)
			return
		}
	}
	id := ep.identity(r.spec.Name, &c.Ref) // after the space is settled: the identity block names it
	if r.spec.LocalModules {
		d.Append(r.planBundle(plan, config, state, id)...)
	}
	if r.spec.FilesKind != "" {
		d.Append(r.planFiles(plan, config, state, id)...)
	}
	d.Append(r.planRecordedRef(c, config, state == nil, id)...)
	if d.HasError() {
		resp.Diagnostics.Append(d...)
		return
	}
	spec, specErr := c.Encode(plan)
	if r.spec.Revision {
		d.Append(r.planRevisionName(&ep, es, plan, config, state, c, spec, specErr, resp)...)
	}
	if n, ok := plan[attrName].(string); ok {
		if err := form.ValidateName(n); err != nil {
			d.Append(renderError("Invalid name", err, withCode(id, CodeInvalidConfig))...)
		}
	}
	if specErr == nil {
		rules := r.planRules(c, spec, id)
		d.Append(rules...)
		if !rules.HasError() { // a value the schema refuses is not also a host limit
			d.Append(r.planSupport(ctx, c, spec, plan, id)...)
		}
	}
	if state != nil && specErr == nil && ep.Name == es.Name && ep.Space == es.Space && r.unchanged(c, spec, state) {
		keepHostReported(plan, state, c)
		if es.DriftReason != "" {
			r.planDriftRepair(plan, c, resp)
		}
	}
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if state == nil && r.data != nil {
		r.data.notePlanned(ep.Space, c.Ref.Kind, plan[attrName], c.Ref.APIVersion)
	}
	resp.Diagnostics.Append(r.setPlan(ctx, resp, plan)...)
}

// planDriftRepair plans the recovery of an unchanged resource whose
// relation target was replaced or removed (spec/host-api-v1alpha3.md §5.5): a revision is
// replaced; any other Form is re-applied spec-identically, which re-pins
// its relations and renders a new representation.
func (r *Resource) planDriftRepair(plan map[string]any, c *Codec, resp *planOutcome) {
	if r.spec.Revision {
		plan[attrDriftReason] = nil
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root(attrDriftReason))
		return
	}
	unknownRepresentation(plan, c)
}

func (r *Resource) setPlan(ctx context.Context, resp *planOutcome, plan map[string]any) diag.Diagnostics {
	v, err := fromGo(r.spec.ObjectType, plan)
	if err != nil {
		return renderError("Cannot build the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})
	}
	resp.Plan = v
	return nil
}

// planSpace: an unset space is the recorded one, else the provider's; it
// is validated before any host call (decision 0003). ep is the plan's
// envelope, kept in step; es the state's (zero without state).
func (r *Resource) planSpace(ep *envelope, es envelope, plan, config, state map[string]any, resp *planOutcome) diag.Diagnostics {
	if config[attrSpace] == nil {
		switch {
		case r.data == nil && state != nil:
			ep.setSpace(plan, state[attrSpace])
		case r.data == nil:
			ep.setSpace(plan, Unknown)
		case r.data.Space != "":
			// The provider's space is the default of every resource that
			// sets none: changing it moves (replaces) them, as changing a
			// resource's own space does.
			ep.setSpace(plan, r.data.Space)
			if state != nil && es.Space != r.data.Space {
				resp.RequiresReplace = append(resp.RequiresReplace, path.Root(attrSpace))
			}
		case state != nil:
			ep.setSpace(plan, state[attrSpace])
		default:
			return renderError("No space for "+r.spec.Name, errors.New("the resource sets no space and the provider has none"),
				identity{Type: r.spec.Name, Name: ep.Name, Code: CodeSpaceMissing})
		}
	}
	if s, ok := plan[attrSpace].(string); ok {
		if err := spaceid.Validate(s); err != nil {
			return renderError("Invalid space", err, identity{Type: r.spec.Name, Space: s, Name: ep.Name, Code: CodeInvalidSpace})
		}
	}
	return nil
}

// planRevisionName derives a revision's name from its content and owner
// when config omits it, and refuses replacing a revision under a pinned
// name (decision 0029: both apply orders deadlock). ep is the plan's
// envelope, kept in step; es the state's (zero without state).
func (r *Resource) planRevisionName(ep *envelope, es envelope, plan, config, state map[string]any, c *Codec, spec map[string]any, specErr error, resp *planOutcome) diag.Diagnostics {
	id := ep.identity(r.spec.Name, &c.Ref)
	owner, hasOwner := config[attrRevisionOwner].(string)
	if config[attrName] != nil {
		if config[attrRevisionOwner] != nil {
			return renderError("Both name and revision_owner are set", errors.New("revision_owner only derives a name; it is refused together with a pinned name"), withCode(id, CodeInvalidConfig))
		}
		if state != nil && specErr == nil && es.Name == ep.Name {
			have, err := c.Encode(state)
			if same, comparable := sameSpec(have, spec); err == nil && comparable && !same {
				return renderError("A revision cannot be replaced under the same name", fmt.Errorf("%s %q is immutable and pinned by name; a changed revision needs a new name", r.spec.Name, ep.Name), withCode(id, CodeRevisionReplacedInPlace))
			}
		}
		return nil
	}
	if !hasOwner {
		if config[attrRevisionOwner] == nil {
			return renderError("A revision needs a name or a revision_owner", errors.New("name is omitted and revision_owner is not set"), withCode(id, CodeRevisionOwnerMissing))
		}
		ep.setName(plan, Unknown)
		return nil
	}
	if specErr != nil {
		ep.setName(plan, Unknown)
		return nil
	}
	content := ""
	if r.spec.LocalModules || r.spec.FilesKind != "" {
		content = str(spec, "manifestDigest")
	} else {
		dg, err := form.SpecDigest(c.Def.Materialize(spec))
		if err != nil {
			return renderError("Cannot digest the revision", err, withCode(id, CodeInvalidConfig))
		}
		content = dg
	}
	ownerSum := sha256.Sum256([]byte(owner))
	name := fmt.Sprintf("%s-%s-%s", r.spec.NamePrefix, hexPrefix(content), hex.EncodeToString(ownerSum[:])[:12])
	ep.setName(plan, name)
	if state != nil && es.Name != name {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root(attrName))
	} else if owner, ok := state[attrRevisionOwner].(string); ok && owner == "" {
		plan[attrRevisionOwner] = "" // imported (repo decision 0007): this owner derives the recorded name
	}
	return nil
}

func hexPrefix(digest string) string {
	h := strings.TrimPrefix(digest, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// planRules refuses at plan time what the host would: the desired schema
// (defaults materialised) and the family's spec rules.
func (r *Resource) planRules(c *Codec, spec map[string]any, id identity) diag.Diagnostics {
	var d diag.Diagnostics
	full := c.Def.Materialize(jsonRoundTrip(spec))
	var semantic []form.Diagnostic
	if m, ok := full.(map[string]any); ok && c.Ref.APIVersion == edgeGroup { // not an object: ValidateSpec refuses it
		for _, re := range edge.SpecRules(c.Ref.Kind, m) {
			semantic = append(semantic, form.Diagnostic{Pointer: re.Pointer, Message: re.Message + " [" + re.Rule + "]"})
		}
	}
	for _, dg := range form.MergeDiagnostics(semantic, c.Def.ValidateSpec(full)) {
		id.Pointer = dg.Pointer
		d.Append(renderError("Invalid "+r.spec.Name, errors.New(dg.Message), withCode(id, CodePlanRule))...)
	}
	return d
}

// edgeGroup is the Edge family's group, whose spec rules the provider
// applies at plan time.
const edgeGroup = edge.Group

// planRecordedRef refuses configuring an attribute that the planned
// FormRef (the one recorded in state, or for a create — creating — the
// create ref) has no member for: the type's schema is its default create definition's plus
// SchemaFields, while a resource is encoded by the codec of its own ref
// (decision 0017), which would silently drop the value (repo decision
// 0003 rule 3; spec/lane-v1beta1.md §13.3).
func (r *Resource) planRecordedRef(c *Codec, config map[string]any, creating bool, id identity) diag.Diagnostics {
	has := map[string]bool{}
	for _, f := range c.Fields {
		has[f.Attr] = true
	}
	var d diag.Diagnostics
	for _, f := range r.spec.SchemaFields {
		if _, unset := config[f.Attr].(unknown); !has[f.Attr] && config[f.Attr] != nil && !unset { // a wholly unknown value may yet be null
			with := strings.Join(r.spec.refsWith(f.Attr), "; ")
			if creating {
				d.Append(renderError("The FormRef this resource is created under has no member for "+f.Attr,
					fmt.Errorf("%s sets %s, but the resource would be created under %s, which has no member %s; FormRefs with it: %s",
						r.spec.Name, f.Attr, c.Ref, f.Member, with), withCode(id, CodeRefLacksAttribute))...)
				continue
			}
			d.Append(renderError("The FormRef this resource is bound to has no member for "+f.Attr,
				fmt.Errorf("%s sets %s, but the resource is bound to %s, which has no member %s; new resources of %s are created under %s; FormRefs with it: %s",
					r.spec.Name, f.Attr, c.Ref, f.Member, r.spec.Name, r.spec.Create.Ref, with), withCode(id, CodeRefLacksAttribute))...)
		}
	}
	return d
}
