package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/takoform/takoform/client"
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

func attrsOf(v tftypes.Value) (map[string]any, error) {
	g, err := toGo(v)
	if err != nil {
		return nil, err
	}
	switch m := g.(type) {
	case map[string]any:
		return m, nil
	case nil:
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("a %s value where an object was expected", v.Type())
}

func (r *Resource) setState(ctx context.Context, st *tftypes.Value, attrs map[string]any) diag.Diagnostics {
	v, err := fromGo(r.spec.ObjectType, attrs)
	if err != nil {
		return renderError("Cannot record state", err, identity{Type: r.spec.Name, Code: CodeHostResponseInvalid})
	}
	*st = v
	return nil
}

// stateCodec dispatches on the FormRef recorded in state; a ref without a
// codec fails closed, naming it and every ref the type knows (decision
// 0017). The resource is never addressed under another ref.
func (r *Resource) stateCodec(e envelope) (*Codec, diag.Diagnostics) {
	c, ok := r.spec.Codec(e.Ref)
	if !ok {
		return nil, renderError("State is bound to a FormRef this provider build does not support",
			fmt.Errorf("recorded %s; this build knows %s", e.Ref, refList(r.spec.KnownRefs())),
			withCode(e.identity(r.spec.Name, &e.Ref), CodeUnknownFormRef))
	}
	return c, nil
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

// answer is one host answer to record: res, decoded through the codec of
// its FormRef into attrs, whose prior values are prior (Codec.Decode); id
// names the resource in diagnostics.
type answer struct {
	codec        *Codec
	res          *wire.Resource
	attrs, prior map[string]any
	id           identity
}

// record decodes a host answer into its attrs and writes state and, when
// ident is not nil, identity: the last step of every create, update, read
// and import.
func (r *Resource) record(ctx context.Context, st, ident *tftypes.Value, a answer) diag.Diagnostics {
	if err := r.decode(a.codec, a.res, a.attrs, a.prior); err != nil {
		return renderError("The host's answer cannot be recorded", err, withCode(a.id, CodeHostResponseInvalid))
	}
	d := r.setState(ctx, st, a.attrs)
	if ident != nil {
		d.Append(r.setIdentity(ctx, ident, envelopeOf(a.attrs))...)
	}
	return d
}

// stored is the state of an existing resource: its attributes, their
// envelope, the codec of the FormRef it records and its diagnostic
// identity.
type stored struct {
	attrs map[string]any
	env   envelope
	codec *Codec
	id    identity
}

// recorded reads the state of an existing resource and the codec of the
// FormRef it records (failing closed, stateCodec), once the provider is
// configured; nil with the diagnostics otherwise.
func (r *Resource) recorded(raw tftypes.Value) (*stored, diag.Diagnostics) {
	state, err := attrsOf(raw)
	if err != nil {
		return nil, renderError("Cannot read state", err, identity{Type: r.spec.Name, Code: CodeInternal})
	}
	e := envelopeOf(state)
	c, d := r.stateCodec(e)
	if d.HasError() || !r.configured(&d) {
		return nil, d
	}
	return &stored{attrs: state, env: e, codec: c, id: e.identity(r.spec.Name, &e.Ref)}, d
}

func request(c *Codec, e envelope, spec map[string]any) (wire.ResourceRequest, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return wire.ResourceRequest{}, fmt.Errorf("encode the desired spec: %w", err)
	}
	return wire.ResourceRequest{APIVersion: c.Ref.APIVersion, Kind: c.Ref.Kind, Form: wire.FormReference{FormRef: c.Ref},
		Metadata: wire.Metadata{Name: e.Name, Space: e.Space}, Spec: b}, nil
}

// apply prepares and applies spec at e's space and name: a create when pre
// is empty, else an update fenced on pre's generation and uid. Under a
// mutation context (mutationContext) stopped before the apply is sent it
// sends nothing and answers errInterrupted.
func (r *Resource) apply(ctx context.Context, c *Codec, e envelope, spec map[string]any, pre client.Precondition) (*wire.Resource, error) {
	req, err := request(c, e, spec)
	if err != nil {
		return nil, err
	}
	ar := wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata, ExpectedUID: pre.UID}
	if interrupted(ctx) {
		return nil, errInterrupted
	}
	hc, err := r.data.clientFor(ctx, c.Ref)
	if err != nil {
		return nil, err
	}
	p, err := hc.Prepare(ctx, req, pre.Generation)
	if interrupted(ctx) {
		return nil, errInterrupted // a prepare changes nothing; the apply is not sent
	}
	if err != nil {
		return nil, err
	}
	ar.Spec, ar.Review = p.Resource.Spec, wire.Review{PrepareDigest: p.Review.PrepareDigest}
	return hc.ApplyAndWait(ctx, ar, pre)
}

// create creates the resource of the planned value under the type's
// default create FormRef, recording its state and identity in resp.
func (r *Resource) create(ctx context.Context, planned tftypes.Value, resp *outcome) {
	plan, err := attrsOf(planned)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})...)
		return
	}
	if !r.configured(&resp.Diagnostics) {
		return
	}
	e := envelopeOf(plan)
	c, refusal := r.createCodec(ctx, plan, e.Space)
	if refusal != nil {
		resp.Diagnostics.Append(renderError("Cannot choose the family to create "+r.spec.Name+" in", refusal.err, withCode(e.identity(r.spec.Name, nil), refusal.code))...)
		return
	}
	e.Ref = c.Ref // created under the create ref of spec/lane-v1beta1.md §13.6
	id := e.identity(r.spec.Name, &c.Ref)
	if !r.data.claims.claim(e.address()) {
		resp.Diagnostics.Append(r.duplicateAddress(c, id)...)
		return
	}
	ctx, cancel := mutationContext(ctx, timeout(e.CreateTimeout, 20*time.Minute))
	defer cancel()
	if r.spec.LocalModules {
		if interrupted(ctx) {
			resp.Diagnostics.Append(interruptedError("Cannot create "+r.spec.Name, id)...)
			return
		}
		if d := r.uploadBundle(ctx, c.Ref, plan, id); d.HasError() {
			resp.Diagnostics.Append(d...)
			return
		}
	}
	if r.spec.FilesKind != "" {
		if interrupted(ctx) {
			resp.Diagnostics.Append(interruptedError("Cannot create "+r.spec.Name, id)...)
			return
		}
		if d := r.uploadFiles(ctx, c.Ref, plan, id); d.HasError() {
			resp.Diagnostics.Append(d...)
			return
		}
	}
	spec, err := c.Encode(plan)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot build the desired spec", err, withCode(id, CodeInvalidConfig))...)
		return
	}
	res, err := r.apply(ctx, c, e, spec, client.Precondition{})
	if op := pendingOperation(err); op != "" {
		writeRef(plan, c.Ref)
		resp.Diagnostics.Append(r.pendingWarning(err, id, op)...)
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, withPending(plan, op))...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, e)...)
		return
	}
	if errors.Is(err, errInterrupted) {
		resp.Diagnostics.Append(interruptedError("Cannot create "+r.spec.Name, id)...)
		return
	}
	if err != nil {
		if d := r.alreadyExists(ctx, e, err, id); d != nil {
			resp.Diagnostics.Append(d...)
			return
		}
		resp.Diagnostics.Append(r.mutationError("Cannot create "+r.spec.Name, err, id)...)
		return
	}
	resp.Diagnostics.Append(r.record(ctx, &resp.State, resp.Identity, answer{codec: c, res: res, attrs: plan, prior: plan, id: id})...)
}

// read refreshes current, the recorded state, from the host under the
// FormRef it records; a resource the host no longer holds leaves resp's
// state null.
func (r *Resource) read(ctx context.Context, current tftypes.Value, resp *outcome) {
	s, d := r.recorded(current)
	if s == nil {
		resp.Diagnostics.Append(d...)
		return
	}
	id := s.id
	resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, s.env)...) // state written before identity existed gains it
	res, running, err := r.current(ctx, s.env, false)
	if running && err == nil {
		return // the accepted mutation is still running: absence is not deletion
	}
	if client.IsNotFound(err) {
		resp.State = tftypes.NewValue(r.spec.ObjectType, nil)
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
	if uid := s.env.UID; uid != "" && res.Metadata.UID != uid {
		id.ExpectedUID, id.CurrentUID, id.Code = uid, res.Metadata.UID, CodeUIDMismatch
		resp.Diagnostics.Append(renderError("A different incarnation now holds this name",
			fmt.Errorf("state records uid %s; the host answers uid %s under the same name", uid, res.Metadata.UID), id)...)
		return
	}
	d = r.record(ctx, &resp.State, nil, answer{codec: s.codec, res: res, attrs: copyAttrs(s.attrs), prior: s.attrs, id: id})
	if _, reason := readiness(res); reason != "" && !d.HasError() {
		d.Append(renderWarning("A referenced resource was replaced or removed ("+reason+")",
			errors.New(readyHostReason(res)), withCode(id, CodeRelationTargetChanged))...)
	}
	resp.Diagnostics.Append(d...)
}

// update applies an in-place change under the recorded FormRef; a change
// of provider-side attributes only (timeouts) makes no host call, unless
// a relation drifted: then a spec-identical apply re-pins it (spec/host-api-v1alpha3.md §5.5).
func (r *Resource) update(ctx context.Context, planned, prior tftypes.Value, resp *outcome) {
	plan, err1 := attrsOf(planned)
	state, err2 := attrsOf(prior)
	if err := errors.Join(err1, err2); err != nil {
		resp.Diagnostics.Append(renderError("Cannot read the plan", err, identity{Type: r.spec.Name, Code: CodeInternal})...)
		return
	}
	es := envelopeOf(state)
	c, d := r.stateCodec(es)
	if d.HasError() || !r.configured(&d) {
		resp.Diagnostics.Append(d...)
		return
	}
	id := es.identity(r.spec.Name, &es.Ref)
	ctx, cancel := mutationContext(ctx, timeout(envelopeOf(plan).UpdateTimeout, 20*time.Minute))
	defer cancel()
	if es.PendingOperation != "" {
		settled, err := r.settled(ctx, es, state, c)
		if err != nil {
			resp.Diagnostics.Append(r.settleError(err, es, id)...)
			return
		}
		state, es = settled, envelopeOf(settled)
	}
	want, err := c.Encode(plan)
	if err != nil {
		resp.Diagnostics.Append(renderError("Cannot build the desired spec", err, withCode(id, CodeInvalidConfig))...)
		return
	}
	next := copyAttrs(plan)
	if r.unchanged(c, want, state) && es.DriftReason == "" {
		keepHostReported(next, state, c)
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, next)...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, envelopeOf(next))...)
		return
	}
	res, err := r.apply(ctx, c, es, want, es.precondition())
	if op := pendingOperation(err); op != "" {
		keepHostReported(next, state, c)
		resp.Diagnostics.Append(r.pendingWarning(err, id, op)...)
		resp.Diagnostics.Append(r.setState(ctx, &resp.State, withPending(next, op))...)
		resp.Diagnostics.Append(r.setIdentity(ctx, resp.Identity, envelopeOf(next))...)
		return
	}
	if errors.Is(err, errInterrupted) {
		resp.Diagnostics.Append(interruptedError("Cannot update "+r.spec.Name, id)...)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(r.mutationError("Cannot update "+r.spec.Name, err, es.fenced(id))...)
		return
	}
	resp.Diagnostics.Append(r.record(ctx, &resp.State, resp.Identity, answer{codec: c, res: res, attrs: next, prior: plan, id: id})...)
}

// unchanged reports whether the recorded state encodes (through c) to the
// desired spec want. A state that no longer encodes is changed: applying
// want is what brings it back.
func (r *Resource) unchanged(c *Codec, want, state map[string]any) bool {
	have, err := c.Encode(state)
	if err != nil {
		return false
	}
	same, comparable := sameSpec(want, have)
	return same && comparable
}

// destroy deletes the resource of the recorded state prior under the
// FormRef it records, fenced on generation and uid.
func (r *Resource) destroy(ctx context.Context, prior tftypes.Value, resp *outcome) {
	s, d := r.recorded(prior)
	if s == nil {
		resp.Diagnostics.Append(d...)
		return
	}
	e := s.env
	ctx, cancel := mutationContext(ctx, timeout(e.DeleteTimeout, 30*time.Minute))
	defer cancel()
	if e.PendingOperation != "" {
		settled, err := r.settled(ctx, e, s.attrs, s.codec)
		if client.IsNotFound(err) {
			return // the accepted change left nothing to delete
		}
		if err != nil {
			resp.Diagnostics.Append(r.settleError(err, e, s.id)...)
			return
		}
		e = envelopeOf(settled)
	}
	if interrupted(ctx) {
		resp.Diagnostics.Append(interruptedError("Cannot delete "+r.spec.Name, s.id)...)
		return
	}
	hc, err := r.data.clientFor(ctx, e.Ref)
	if err == nil {
		err = hc.DeleteAndWait(ctx, e.address(), e.precondition())
	}
	if err != nil && !client.IsNotFound(err) {
		id := e.fenced(s.id)
		id.RevisionDelete = r.spec.Revision
		resp.Diagnostics.Append(r.mutationError("Cannot delete "+r.spec.Name, err, id)...)
	}
}

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
func (r *Resource) alreadyExists(ctx context.Context, e envelope, err error, id identity) diag.Diagnostics {
	var we *wire.Error
	if !errors.As(err, &we) || (we.Code != wire.InvalidArgument && we.Code != wire.GenerationConflict) {
		return nil
	}
	hc, rerr := r.data.clientFor(ctx, e.Ref)
	if rerr != nil {
		return nil
	}
	res, rerr := hc.Read(ctx, e.address())
	if rerr != nil {
		return nil
	}
	id.CurrentUID, id.CurrentGeneration, id.Code = res.Metadata.UID, res.Metadata.Generation, CodeAlreadyExists
	return renderError(r.spec.Name+" already exists on the host",
		fmt.Errorf("%s %q already exists in space %q (uid %s); the import ID is %q", e.Ref.Kind, e.Name, e.Space, res.Metadata.UID, e.Space+"/"+e.Name), id)
}
