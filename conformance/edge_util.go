package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

// edgeUnprepared is a well-formed prepareDigest no prepare minted: an
// apply carrying it reaches the host's spec checks, never a commit.
var edgeUnprepared = "sha256:" + strings.Repeat("0", 64)

// edgeRefused checks err is the host's refusal with code, answered
// synchronously or as the terminal error of an accepted operation.
func edgeRefused(err error, code wire.Code) error {
	var of *client.OperationFailedError
	if errors.As(err, &of) {
		if of.Err.Code != code {
			return fmt.Errorf("the operation failed with %s (%s), want %s", of.Err.Code, of.Err.Message, code)
		}
		return nil
	}
	return ExpectCode(err, code)
}

// edgeRefusal returns the host's refusal carried by err, or nil.
func edgeRefusal(err error) *wire.Error {
	var of *client.OperationFailedError
	if errors.As(err, &of) {
		return of.Err
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	return nil
}

// edgeCreateIn prepares and applies a create of kind in space.
func (e *Env) edgeCreateIn(ctx context.Context, c *client.Client, space, kind, name string, spec any) (*wire.Resource, error) {
	ref, err := e.Ref(kind)
	if err != nil {
		return nil, err
	}
	return e.Apply(ctx, c, e.RequestIn(space, ref, name, spec), nil)
}

// edgeApplyUnprepared sends a create apply carrying a digest no prepare
// minted, for refusals the host must make before the prepare binding.
func (e *Env) edgeApplyUnprepared(ctx context.Context, c *client.Client, space, kind, name string, spec any) error {
	ref, err := e.Ref(kind)
	if err != nil {
		return err
	}
	req := e.RequestIn(space, ref, name, spec)
	_, err = c.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: req.Spec, Review: wire.Review{PrepareDigest: edgeUnprepared}}, client.Precondition{})
	return err
}

// edgeImport adopts a new resource of kind in space under a fresh native id.
func (e *Env) edgeImport(ctx context.Context, c *client.Client, space, kind, name string, spec any) (*wire.Resource, error) {
	ref, err := e.Ref(kind)
	if err != nil {
		return nil, err
	}
	req := e.RequestIn(space, ref, name, spec)
	return c.ImportAndWait(ctx, wire.ImportRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: req.Spec, NativeID: "conformance/" + name + "/" + randomHex(4)}, client.Precondition{})
}

// edgeAbsent checks name of kind does not exist in space for c.
func (e *Env) edgeAbsent(ctx context.Context, c *client.Client, space, kind, name string) error {
	ref, err := e.Ref(kind)
	if err != nil {
		return err
	}
	_, err = c.Read(ctx, client.Address{Space: space, Ref: ref, Name: name})
	if client.IsNotFound(err) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("%s %q was stored although the mutation was refused", kind, name)
	}
	return fmt.Errorf("read %s %q: %w", kind, name, err)
}

// edgeSpecRefused checks a spec the rules refuse from the spec alone is
// refused everywhere it can enter: validate (200, valid:false), prepare,
// apply and import (invalid_argument), and that nothing was stored.
func (e *Env) edgeSpecRefused(ctx context.Context, kind string, spec any, what string) error {
	req, err := e.Request(kind, e.Name("refused"), spec)
	if err != nil {
		return err
	}
	v, err := e.A1.Validate(ctx, req)
	if err != nil {
		return fmt.Errorf("validate %s: %w", what, err)
	}
	if v.Valid || !edgeHasError(v.Diagnostics) {
		return fmt.Errorf("validate %s answered valid=%v with %d diagnostics; want valid:false with an error diagnostic", what, v.Valid, len(v.Diagnostics))
	}
	if _, err := e.A1.Prepare(ctx, req, ""); edgeRefused(err, wire.InvalidArgument) != nil {
		return fmt.Errorf("prepare %s: %w", what, edgeRefused(err, wire.InvalidArgument))
	}
	name := e.Name("refused")
	if err := edgeRefused(e.edgeApplyUnprepared(ctx, e.A1, e.Space, kind, name, spec), wire.InvalidArgument); err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	if err := e.edgeAbsent(ctx, e.A1, e.Space, kind, name); err != nil {
		return err
	}
	_, err = e.edgeImport(ctx, e.A1, e.Space, kind, name, spec)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("import %s: %w", what, err)
	}
	return e.edgeAbsent(ctx, e.A1, e.Space, kind, name)
}

// edgeAggregateRefused checks a spec that breaks a rule over the whole
// spec (weights summing to 10000, each version listed once, one
// environment namespace) is refused
// where spec/conformance-probe.md §3 places it: prepare answers a review
// (validate need not report it), the apply of that very review is
// invalid_argument, an import is invalid_argument, and nothing is stored.
func (e *Env) edgeAggregateRefused(ctx context.Context, kind string, spec any, rule, what string) error {
	name := e.Name("refused")
	req, err := e.Request(kind, name, spec)
	if err != nil {
		return err
	}
	p, err := e.A1.Prepare(ctx, req, "")
	if err != nil {
		return fmt.Errorf("prepare %s refused it (%v); prepare answers a review for a spec that passes the per-field rules, and %s is refused by the apply (spec/conformance-probe.md §3)", what, err, rule)
	}
	_, err = e.A1.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("apply of the prepared review of %s (rule: %s): %w", what, rule, err)
	}
	if err := e.edgeAbsent(ctx, e.A1, e.Space, kind, name); err != nil {
		return err
	}
	_, err = e.edgeImport(ctx, e.A1, e.Space, kind, name, spec)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("import %s (rule: %s): %w", what, rule, err)
	}
	return e.edgeAbsent(ctx, e.A1, e.Space, kind, name)
}

func edgeHasError(ds []wire.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == "error" {
			return true
		}
	}
	return false
}

// edgeReady returns res's Ready condition (zero when it has none).
func edgeReady(res *wire.Resource) wire.Condition {
	for _, c := range res.Status.Conditions {
		if c.Type == "Ready" {
			return c
		}
	}
	return wire.Condition{}
}

// edgeRead reads res again under its exact address.
func (e *Env) edgeRead(ctx context.Context, c *client.Client, res *wire.Resource) (*wire.Resource, error) {
	got, err := c.Read(ctx, Addr(res))
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", res.Kind, res.Metadata.Name, err)
	}
	return got, nil
}

// edgeVersion uploads a bundle whose default export carries exports and
// creates a WorkerVersion of worker in space declaring declares, with
// extra desired members (bindings, vars).
func (e *Env) edgeVersion(ctx context.Context, c *client.Client, space, worker string, exports, declares []string, extra map[string]any) (*wire.Resource, error) {
	digest, err := e.UploadBundle(ctx, c, Module(exports...))
	if err != nil {
		return nil, fmt.Errorf("upload bundle: %w", err)
	}
	bundle, err := e.edgeCreateIn(ctx, c, space, "WorkerBundle", e.Name("bundle"), map[string]any{"manifestDigest": digest})
	if err != nil {
		return nil, fmt.Errorf("create bundle: %w", err)
	}
	spec := map[string]any{"worker": Rel("ModuleWorker", worker), "bundle": Rel("WorkerBundle", bundle.Metadata.Name), "handlers": edgeList(declares)}
	for k, v := range extra {
		spec[k] = v
	}
	v, err := e.edgeCreateIn(ctx, c, space, "WorkerVersion", e.Name("version"), spec)
	if err != nil {
		return nil, fmt.Errorf("create version declaring %v: %w", declares, err)
	}
	return v, nil
}

func edgeList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// edgeWeighted is one deployment entry.
type edgeWeighted struct {
	version string
	weight  int
}

// edgeDeploymentSpec is a WorkerDeployment spec of worker.
func edgeDeploymentSpec(worker string, vs ...edgeWeighted) map[string]any {
	list := make([]any, len(vs))
	for i, v := range vs {
		list[i] = map[string]any{"weight": v.weight, "workerVersion": Rel("WorkerVersion", v.version)}
	}
	return map[string]any{"worker": Rel("ModuleWorker", worker), "versions": list}
}

// edgeDeploy creates, in space, a worker, one version exporting and
// declaring handlers, and a deployment weighting it 10000 (a.Bundle unset).
func (e *Env) edgeDeploy(ctx context.Context, c *client.Client, space string, handlers ...string) (*App, error) {
	a := &App{}
	var err error
	if a.Worker, err = e.edgeCreateIn(ctx, c, space, "ModuleWorker", e.Name("worker"), map[string]any{}); err != nil {
		return nil, fmt.Errorf("create worker: %w", err)
	}
	if a.Version, err = e.edgeVersion(ctx, c, space, a.Worker.Metadata.Name, handlers, handlers, nil); err != nil {
		return nil, err
	}
	if a.Deployment, err = e.edgeCreateIn(ctx, c, space, "WorkerDeployment", e.Name("deploy"),
		edgeDeploymentSpec(a.Worker.Metadata.Name, edgeWeighted{a.Version.Metadata.Name, 10000})); err != nil {
		return nil, fmt.Errorf("create deployment: %w", err)
	}
	return a, nil
}

// edgeRelName reads the target name of a relation member of res's spec.
func edgeRelName(res *wire.Resource, field string) string {
	var spec map[string]json.RawMessage
	_ = json.Unmarshal(res.Spec, &spec)
	var rel struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(spec[field], &rel)
	return rel.Name
}

// edgeQueueConsumerSpec is a QueueConsumer of queue by worker; dlq may be "".
func edgeQueueConsumerSpec(worker, queue, dlq string) map[string]any {
	s := map[string]any{"worker": Rel("ModuleWorker", worker), "queue": Rel("AtLeastOnceQueue", queue),
		"maxBatchSize": 10, "maxBatchTimeoutSeconds": 5, "maxConcurrency": 1, "maxRetries": 3, "retryDelaySeconds": 0}
	if dlq != "" {
		s["deadLetterQueue"] = Rel("AtLeastOnceQueue", dlq)
	}
	return s
}

// edgeQueueSpec is an AtLeastOnceQueue spec.
func edgeQueueSpec() map[string]any { return map[string]any{"messageRetentionSeconds": 3600} }

// edgeHostname is a hostname no earlier run claimed.
func edgeHostname(prefix string) string { return prefix + "-" + randomHex(5) + ".example.com" }

// edgeAttachmentSpec is a minimal spec of an attachment kind on worker
// (a QueueConsumer drains queue).
func edgeAttachmentSpec(kind, worker, queue string) map[string]any {
	switch kind {
	case "WorkerCustomDomain":
		return map[string]any{"worker": Rel("ModuleWorker", worker), "hostname": edgeHostname("gate")}
	case "WorkerCronTrigger":
		return map[string]any{"worker": Rel("ModuleWorker", worker), "cron": "*/5 * * * *"}
	case "QueueConsumer":
		return edgeQueueConsumerSpec(worker, queue, "")
	}
	return map[string]any{"worker": Rel("ModuleWorker", worker)}
}

// edgeMentions checks a refusal's message names every one of words.
func edgeMentions(err error, words ...string) error {
	we := edgeRefusal(err)
	if we == nil {
		return fmt.Errorf("no refusal to read: %v", err)
	}
	for _, w := range words {
		if !strings.Contains(we.Message, w) {
			return fmt.Errorf("the %s refusal %q does not name %q", we.Code, we.Message, w)
		}
	}
	return nil
}

// edgeTryDelete deletes res as token under a fresh Idempotency-Key, so a
// refusal it earns is never replayed to a later, legitimate delete (a
// client's deterministic key would replay it, spec/host-api-v1alpha3.md §3.5). headers add
// preconditions; the generation fence is res's unless headers set one.
// It returns nil on 204, the refusal as a *wire.Error, or an
// *client.OperationFailedError when an accepted delete failed.
func (e *Env) edgeTryDelete(ctx context.Context, c *client.Client, token string, res *wire.Resource, headers map[string]string) error {
	h := map[string]string{wire.HeaderIdempotency: "conformance-" + randomHex(8), wire.HeaderGeneration: res.Metadata.Generation}
	for k, v := range headers {
		h[k] = v
	}
	r, err := e.Do(ctx, token, "DELETE", ResourcePath(res.Form.FormRef, res.Metadata.Name, "")+ExactQuery(res.Metadata.Space, res.Form.FormRef), h, nil)
	if err != nil {
		return err
	}
	switch r.Status {
	case 204:
		return nil
	case 202:
		var env wire.OperationEnvelope
		if err := json.Unmarshal(r.Body, &env); err != nil {
			return fmt.Errorf("202 without an operation: %s", abbreviate(r.Body))
		}
		_, err := c.WaitOperation(ctx, env.Operation.ID)
		return err
	}
	body, err := r.Envelope()
	if err != nil {
		return err
	}
	return &wire.Error{Code: body.Code, Message: body.Message, HostCode: body.HostCode, RequestID: body.RequestID}
}

// edgeTryApply prepares spec for kind/name in space (an update of cur when
// cur is set) and applies it as c/token under a fresh Idempotency-Key, so
// a refusal it earns is never replayed to a later apply of the same body.
func (e *Env) edgeTryApply(ctx context.Context, c *client.Client, token, space, kind, name string, spec any, cur *wire.Resource) (*wire.Resource, error) {
	ref, err := e.Ref(kind)
	if err != nil {
		return nil, err
	}
	if cur != nil {
		ref = cur.Form.FormRef
	}
	req := e.RequestIn(space, ref, name, spec)
	gen := ""
	h := map[string]string{wire.HeaderIdempotency: "conformance-" + randomHex(8)}
	if cur != nil {
		gen = cur.Metadata.Generation
		h[wire.HeaderGeneration] = gen
	} else {
		h["If-None-Match"] = "*"
	}
	p, err := c.Prepare(ctx, req, gen)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}})
	if err != nil {
		return nil, err
	}
	r, err := e.Do(ctx, token, "PUT", ResourcePath(ref, name, ""), h, body)
	if err != nil {
		return nil, err
	}
	switch r.Status {
	case 200, 201:
		var res wire.Resource
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return nil, fmt.Errorf("HTTP %d body is not a resource: %s", r.Status, abbreviate(r.Body))
		}
		return &res, nil
	case 202:
		var env wire.OperationEnvelope
		if err := json.Unmarshal(r.Body, &env); err != nil {
			return nil, fmt.Errorf("202 without an operation: %s", abbreviate(r.Body))
		}
		op, err := c.WaitOperation(ctx, env.Operation.ID)
		if err != nil {
			return nil, err
		}
		var out wire.ResourceEnvelope
		if err := json.Unmarshal(op.Result, &out); err != nil {
			return nil, fmt.Errorf("operation %s result is not a resource: %s", op.ID, abbreviate(op.Result))
		}
		return &out.Resource, nil
	}
	b, err := r.Envelope()
	if err != nil {
		return nil, err
	}
	return nil, &wire.Error{Code: b.Code, Message: b.Message, HostCode: b.HostCode, RequestID: b.RequestID}
}

// edgeTryCreate is edgeTryApply of a create as A1 in the run's space.
func (e *Env) edgeTryCreate(ctx context.Context, kind, name string, spec any) (*wire.Resource, error) {
	return e.edgeTryApply(ctx, e.A1, e.Creds.A1, e.Space, kind, name, spec, nil)
}

// edgeTryUpdate is edgeTryApply of an update of cur as A1.
func (e *Env) edgeTryUpdate(ctx context.Context, cur *wire.Resource, spec any) (*wire.Resource, error) {
	return e.edgeTryApply(ctx, e.A1, e.Creds.A1, cur.Metadata.Space, cur.Kind, cur.Metadata.Name, spec, cur)
}
