package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

// Resource is THE generic Form resource; spec says which type it is.
type Resource struct {
	spec *TypeSpec
	data *Data
}

var (
	_ resource.ResourceWithConfigure    = (*Resource)(nil)
	_ resource.ResourceWithImportState  = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan   = (*Resource)(nil)
	_ resource.ResourceWithUpgradeState = (*Resource)(nil)
)

// Metadata names the type.
func (r *Resource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.spec.Name
}

// Schema is the type's one schema.
func (r *Resource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.spec.Schema
}

// Configure receives the provider configuration's shared Data.
func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if d, ok := req.ProviderData.(*Data); ok {
		r.data = d
	}
}

// tfType is the type's Terraform object type, built once per TypeSpec
// (its schema never changes after NewRegistry): building it walks every
// attribute, which per plan, read and apply was the largest share of the
// provider's own allocations (issue 14).
func (r *Resource) tfType(ctx context.Context) tftypes.Type {
	if t, ok := tfTypes.Load(r.spec); ok {
		return t.(tftypes.Type)
	}
	t, _ := tfTypes.LoadOrStore(r.spec, r.spec.Schema.Type().TerraformType(ctx))
	return t.(tftypes.Type)
}

// tfTypes: *TypeSpec → its tftypes.Type (tfType).
var tfTypes sync.Map

func attrsOf(v tftypes.Value) (map[string]any, error) {
	g, err := toGo(v)
	if err != nil {
		return nil, err
	}
	m, _ := g.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func (r *Resource) setState(ctx context.Context, st *tfsdk.State, attrs map[string]any) diag.Diagnostics {
	v, err := fromGo(r.tfType(ctx), attrs)
	if err != nil {
		return renderError("Cannot record state", err, identity{Type: r.spec.Name, Code: CodeHostResponseInvalid})
	}
	st.Raw = v
	return nil
}

// refOf is the exact FormRef recorded in state.
func refOf(attrs map[string]any) form.FormRef {
	return form.FormRef{APIVersion: str(attrs, "form_api_version"), Kind: str(attrs, "form_kind"),
		DefinitionVersion: str(attrs, "form_definition_version"), SchemaDigest: str(attrs, "form_schema_digest")}
}

func (r *Resource) ident(attrs map[string]any, ref *form.FormRef) identity {
	return identity{Type: r.spec.Name, Space: str(attrs, "space"), Name: str(attrs, "name"), Form: ref}
}

// stateCodec dispatches on the FormRef recorded in state; a ref without a
// codec fails closed, naming it and every ref the type knows (decision
// 0017). The resource is never addressed under another ref.
func (r *Resource) stateCodec(attrs map[string]any) (*Codec, form.FormRef, diag.Diagnostics) {
	ref := refOf(attrs)
	c, ok := r.spec.Codec(ref)
	if !ok {
		return nil, ref, renderError("State is bound to a FormRef this provider build does not support",
			fmt.Errorf("recorded %s; this build knows %s", ref, refList(r.spec.KnownRefs())),
			identity{Type: r.spec.Name, Space: str(attrs, "space"), Name: str(attrs, "name"), Form: &ref, Code: CodeUnknownFormRef})
	}
	return c, ref, nil
}

// decode records res in attrs through c, the codec of the resource's own
// FormRef (Codec.Decode); the type's attributes that ref has no member or
// output for are null, never left unknown or stale.
func (r *Resource) decode(c *Codec, res *wire.Resource, attrs, prior map[string]any) error {
	if err := c.Decode(res, attrs, prior); err != nil {
		return err
	}
	for _, a := range r.spec.foreign(c) {
		attrs[a] = nil
	}
	return nil
}

// record decodes a host answer into attrs and writes state and identity:
// the last step of every create, update, read and import.
func (r *Resource) record(ctx context.Context, st *tfsdk.State, ident *tfsdk.ResourceIdentity, c *Codec, res *wire.Resource, attrs, prior map[string]any, id identity) diag.Diagnostics {
	if err := r.decode(c, res, attrs, prior); err != nil {
		return renderError("The host's answer cannot be recorded", err, withCode(id, CodeHostResponseInvalid))
	}
	d := r.setState(ctx, st, attrs)
	if ident != nil {
		d.Append(r.setIdentity(ctx, ident, attrs)...)
	}
	return d
}

// recorded reads the state of an existing resource and the codec of the
// FormRef it records (failing closed, stateCodec), once the provider is
// configured.
func (r *Resource) recorded(raw tftypes.Value) (map[string]any, *Codec, form.FormRef, identity, diag.Diagnostics) {
	state, err := attrsOf(raw)
	if err != nil {
		return nil, nil, form.FormRef{}, identity{}, renderError("Cannot read state", err, identity{Type: r.spec.Name, Code: CodeInternal})
	}
	c, ref, d := r.stateCodec(state)
	if d.HasError() || !r.configured(&d) {
		return nil, nil, ref, identity{}, d
	}
	return state, c, ref, r.ident(state, &ref), d
}

func timeout(attrs map[string]any, key string, def time.Duration) time.Duration {
	if s := str(attrs, key); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return def
}

func request(c *Codec, space, name string, spec map[string]any) wire.ResourceRequest {
	b, _ := json.Marshal(spec)
	return wire.ResourceRequest{APIVersion: c.Ref.APIVersion, Kind: c.Ref.Kind, Form: wire.FormReference{FormRef: c.Ref},
		Metadata: wire.Metadata{Name: name, Space: space}, Spec: b}
}

// apply prepares and applies: a create when cur is nil, else an update
// fenced on cur's generation and uid. Under a mutation context
// (mutationContext) stopped before the apply is sent it sends nothing and
// answers errInterrupted.
func (r *Resource) apply(ctx context.Context, c *Codec, space, name string, spec map[string]any, cur map[string]any) (*wire.Resource, error) {
	req := request(c, space, name, spec)
	gen, pre := "", client.Precondition{}
	ar := wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata}
	if cur != nil {
		gen = str(cur, "generation")
		pre = client.Precondition{Generation: gen, UID: str(cur, "uid")}
		ar.ExpectedUID = pre.UID
	}
	if interrupted(ctx) {
		return nil, errInterrupted
	}
	p, err := r.data.Client.Prepare(ctx, req, gen)
	if interrupted(ctx) {
		return nil, errInterrupted // a prepare changes nothing; the apply is not sent
	}
	if err != nil {
		return nil, err
	}
	ar.Spec, ar.Review = p.Resource.Spec, wire.Review{PrepareDigest: p.Review.PrepareDigest}
	return r.data.Client.ApplyAndWait(ctx, ar, pre)
}

// Create creates the resource under the type's default create FormRef.
func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, err := attrsOf(req.Plan.Raw)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})...)
		return
	}
	if !r.configured(&resp.Diagnostics) {
		return
	}
	c := r.createCodec(ctx)
	id := r.ident(plan, &c.Ref)
	if !r.data.claims.claim(c.Ref, str(plan, "space"), str(plan, "name")) {
		resp.Diagnostics.Append(r.duplicateAddress(c, id)...)
		return
	}
	ctx, cancel := mutationContext(ctx, timeout(plan, "create_timeout", 20*time.Minute))
	defer cancel()
	if r.spec.LocalModules {
		if interrupted(ctx) {
			resp.Diagnostics.Append(interruptedError("Cannot create "+r.spec.Name, id)...)
			return
		}
		if d := r.uploadBundle(ctx, plan, id); d.HasError() {
			resp.Diagnostics.Append(d...)
			return
		}
	}
	spec, err := c.Encode(plan)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot build the desired spec", err, withCode(id, CodeInvalidConfig))...)
		return
	}
	res, err := r.apply(ctx, c, str(plan, "space"), str(plan, "name"), spec, nil)
	if op := pendingOperation(err); op != "" {
		plan["form_api_version"], plan["form_kind"] = c.Ref.APIVersion, c.Ref.Kind
		plan["form_definition_version"], plan["form_schema_digest"] = c.Ref.DefinitionVersion, c.Ref.SchemaDigest
		resp.Diagnostics.Append(r.pendingWarning(err, id, op)...)
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, withPending(plan, op))...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, plan)...)
		return
	}
	if errors.Is(err, errInterrupted) {
		resp.Diagnostics.Append(interruptedError("Cannot create "+r.spec.Name, id)...)
		return
	}
	if err != nil {
		if d := r.alreadyExists(ctx, c, plan, err, id); d != nil {
			resp.Diagnostics.Append(d...)
			return
		}
		resp.Diagnostics.Append(r.mutationError("Cannot create "+r.spec.Name, err, id)...)
		return
	}
	resp.Diagnostics.Append(r.record(ctx, &resp.State, resp.Identity, c, res, plan, plan, id)...)
}

// Read refreshes from the host under the FormRef recorded in state.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, c, ref, id, d := r.recorded(req.State.Raw)
	if state == nil {
		resp.Diagnostics.Append(d...)
		return
	}
	resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, state)...) // state written before identity existed gains it
	res, running, err := r.current(ctx, state, ref, false)
	if running && err == nil {
		return // the accepted mutation is still running: absence is not deletion
	}
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if d := r.strangerDiag(err, id); d != nil {
		resp.Diagnostics.Append(d...)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot read "+r.spec.Name, err, id)...)
		return
	}
	if uid := str(state, "uid"); uid != "" && res.Metadata.UID != uid {
		id.ExpectedUID, id.CurrentUID, id.Code = uid, res.Metadata.UID, CodeUIDMismatch
		resp.Diagnostics.Append(renderError("A different incarnation now holds this name",
			fmt.Errorf("state records uid %s; the host answers uid %s under the same name", uid, res.Metadata.UID), id)...)
		return
	}
	next := copyAttrs(state)
	d = r.record(ctx, &resp.State, nil, c, res, next, state, id)
	if reason := str(next, "relation_drift_reason"); reason != "" && !d.HasError() {
		d.Append(renderWarning("A referenced resource was replaced or removed ("+reason+")",
			errors.New(readyHostReason(res)), withCode(id, CodeRelationTargetChanged))...)
	}
	resp.Diagnostics.Append(d...)
}

// Update applies an in-place change under the recorded FormRef; a change
// of provider-side attributes only (timeouts) makes no host call, unless
// a relation drifted: then a spec-identical apply re-pins it (spec/host-api-v1alpha3.md §5.5).
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, err1 := attrsOf(req.Plan.Raw)
	state, err2 := attrsOf(req.State.Raw)
	if err := errors.Join(err1, err2); err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})...)
		return
	}
	c, ref, d := r.stateCodec(state)
	if d.HasError() || !r.configured(&d) {
		resp.Diagnostics.Append(d...)
		return
	}
	id := r.ident(state, &ref)
	ctx, cancel := mutationContext(ctx, timeout(plan, "update_timeout", 20*time.Minute))
	defer cancel()
	if str(state, "pending_operation_id") != "" {
		settled, err := r.settled(ctx, state, ref, c)
		if err != nil {
			resp.Diagnostics.Append(r.settleError(err, state, id)...)
			return
		}
		state = settled
	}
	want, err := c.Encode(plan)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot build the desired spec", err, withCode(id, CodeInvalidConfig))...)
		return
	}
	have, _ := c.Encode(state)
	next := copyAttrs(plan)
	if canonicalText(want) == canonicalText(have) && str(state, "relation_drift_reason") == "" {
		for _, k := range computedEnvelope {
			next[k] = state[k]
		}
		for _, o := range c.Outputs {
			next[snake(o)] = state[snake(o)]
		}
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, next)...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, next)...)
		return
	}
	res, err := r.apply(ctx, c, str(state, "space"), str(state, "name"), want, state)
	if op := pendingOperation(err); op != "" {
		for _, k := range computedEnvelope {
			next[k] = state[k]
		}
		for _, o := range c.Outputs {
			next[snake(o)] = state[snake(o)]
		}
		resp.Diagnostics.Append(r.pendingWarning(err, id, op)...)
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, withPending(next, op))...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, next)...)
		return
	}
	if errors.Is(err, errInterrupted) {
		resp.Diagnostics.Append(interruptedError("Cannot update "+r.spec.Name, id)...)
		return
	}
	if err != nil {
		id.ExpectedGeneration, id.ExpectedUID = str(state, "generation"), str(state, "uid")
		resp.Diagnostics.Append(r.mutationError("Cannot update "+r.spec.Name, err, id)...)
		return
	}
	resp.Diagnostics.Append(r.record(ctx, &resp.State, resp.Identity, c, res, next, plan, id)...)
}

// Delete deletes under the recorded FormRef, fenced on generation and uid.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, c, ref, id, d := r.recorded(req.State.Raw)
	if state == nil {
		resp.Diagnostics.Append(d...)
		return
	}
	ctx, cancel := mutationContext(ctx, timeout(state, "delete_timeout", 30*time.Minute))
	defer cancel()
	if str(state, "pending_operation_id") != "" {
		settled, err := r.settled(ctx, state, ref, c)
		if client.IsNotFound(err) {
			return // the accepted change left nothing to delete
		}
		if err != nil {
			resp.Diagnostics.Append(r.settleError(err, state, id)...)
			return
		}
		state = settled
	}
	if interrupted(ctx) {
		resp.Diagnostics.Append(interruptedError("Cannot delete "+r.spec.Name, id)...)
		return
	}
	err := r.data.Client.DeleteAndWait(ctx, client.Address{Space: str(state, "space"), Ref: ref, Name: str(state, "name")},
		client.Precondition{Generation: str(state, "generation"), UID: str(state, "uid")})
	if err != nil && !client.IsNotFound(err) {
		id.ExpectedGeneration, id.ExpectedUID = str(state, "generation"), str(state, "uid")
		resp.Diagnostics.Append(r.mutationError("Cannot delete "+r.spec.Name, err, id)...)
	}
}

// computedEnvelope are the host-reported attributes an unchanged resource
// keeps.
var computedEnvelope = []string{"uid", "generation", "revision", "conditions", "ready", "outputs_json", "form_api_version", "form_kind",
	"form_definition_version", "form_schema_digest", "form_package_digest", "relation_drift_reason", "pending_operation_id"}

func (r *Resource) mutationError(summary string, err error, id identity) diag.Diagnostics {
	var ow *client.OperationWaitError
	if errors.As(err, &ow) {
		id.Code = CodeOperationPending
	}
	var of *client.OperationFailedError
	if errors.As(err, &of) {
		id.Operation = operationID(of)
	}
	return renderError(summary, err, id)
}

func withCode(id identity, code Code) identity { id.Code = code; return id }

// configured reports whether the provider configuration reached a host;
// one whose endpoint, space or token is not known yet cannot act.
func (r *Resource) configured(d *diag.Diagnostics) bool {
	if r.data != nil {
		return true
	}
	d.Append(renderError("The provider is not configured", errors.New("the provider's endpoint, space or token was not known when it was configured"),
		identity{Type: r.spec.Name, Code: CodeInvalidConfig})...)
	return false
}

func copyAttrs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func readyHostReason(res *wire.Resource) string {
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			return c.HostReason
		}
	}
	return ""
}

func operationID(of *client.OperationFailedError) string {
	if of.Operation == nil {
		return ""
	}
	return of.Operation.ID
}

// alreadyExists turns a refused create into a clear "already exists"
// diagnostic when the name is in fact taken (by another configuration, an
// out-of-band change, a deposed object, or an earlier run whose create
// answer was lost): the repair is to import it, never to adopt it silently.
func (r *Resource) alreadyExists(ctx context.Context, c *Codec, plan map[string]any, err error, id identity) diag.Diagnostics {
	var we *wire.Error
	if !errors.As(err, &we) || (we.Code != wire.InvalidArgument && we.Code != wire.GenerationConflict) {
		return nil
	}
	space, name := str(plan, "space"), str(plan, "name")
	res, rerr := r.data.Client.Read(ctx, client.Address{Space: space, Ref: c.Ref, Name: name})
	if rerr != nil {
		return nil
	}
	id.CurrentUID, id.CurrentGeneration, id.Code = res.Metadata.UID, res.Metadata.Generation, CodeAlreadyExists
	return renderError(r.spec.Name+" already exists on the host",
		fmt.Errorf("%s %q already exists in space %q (uid %s); the import ID is %q", c.Ref.Kind, name, space, res.Metadata.UID, space+"/"+name), id)
}
