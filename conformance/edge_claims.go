package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "attachment-claim-decided-on-import", Group: "edge", Summary: "import of an attachment runs the same gate, single-holder, hostname and dead-letter rules as apply", Run: attachmentClaimOnImport},
		Check{ID: "attachment-claim-revalidated-at-commit", Group: "edge", Summary: "an accepted attachment whose claim or gate is broken before commit fails at commit and stores nothing", Run: attachmentClaimAtCommit},
	)
}

// edgeRefuseImport checks a create-intent import is refused with code and
// stores nothing.
func (e *Env) edgeRefuseImport(ctx context.Context, kind string, spec map[string]any, code wire.Code, what string) error {
	name := e.Name("adopt")
	_, err := e.edgeImport(ctx, e.A1, e.Space, kind, name, spec)
	if err := edgeRefused(err, code); err != nil {
		return fmt.Errorf("importing %s: %w", what, err)
	}
	return e.edgeAbsent(ctx, e.A1, e.Space, kind, name)
}

func attachmentClaimOnImport(ctx context.Context, e *Env) error {
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	qn := q.Metadata.Name
	// Gate: no deployment, then a deployment lacking the handler.
	idle, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	all := []string{"fetch", "scheduled", "queue"}
	if _, err := e.edgeVersion(ctx, e.A1, e.Space, idle.Metadata.Name, all, all, nil); err != nil {
		return err
	}
	for _, a := range edgeAttachmentKinds {
		if err := e.edgeRefuseImport(ctx, a.kind, e.edgeAttachmentSpec(a.kind, idle.Metadata.Name, qn), wire.UnsupportedCapability,
			"a "+a.kind+" of a worker with no deployment"); err != nil {
			return err
		}
	}
	f, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	fw := f.Worker.Metadata.Name
	for _, kind := range []string{"WorkerCronTrigger", "QueueConsumer"} {
		if err := e.edgeRefuseImport(ctx, kind, e.edgeAttachmentSpec(kind, fw, qn), wire.UnsupportedCapability, "a "+kind+" of a fetch-only worker"); err != nil {
			return err
		}
	}
	// One endpoint per worker.
	if _, err := e.edgeImport(ctx, e.A1, e.Space, "WorkerEndpoint", e.Name("endpoint"), e.edgeAttachmentSpec("WorkerEndpoint", fw, "")); err != nil {
		return fmt.Errorf("importing the worker's endpoint: %w", err)
	}
	if err := e.edgeRefuseImport(ctx, "WorkerEndpoint", e.edgeAttachmentSpec("WorkerEndpoint", fw, ""), wire.InvalidArgument, "a second endpoint of one worker"); err != nil {
		return err
	}
	// Hostname claim, compared canonically, across spaces of the tenant.
	label := "adopt-" + randomHex(5)
	canonical := label + ".example.com"
	holder, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(fw, canonical))
	if err != nil {
		return err
	}
	other := e.Space + " adopt"
	o, err := e.edgeDeploy(ctx, e.A1, other, "fetch")
	if err != nil {
		return err
	}
	spelled := e.edgeDomainSpec(o.Worker.Metadata.Name, strings.ToUpper(label)+".Example.Com.")
	name := e.Name("domain")
	_, err = e.edgeImport(ctx, e.A1, other, "WorkerCustomDomain", name, spelled)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("importing, in another space, a custom domain on a hostname a live domain holds: %w", err)
	}
	if err := e.edgeAbsent(ctx, e.A1, other, "WorkerCustomDomain", name); err != nil {
		return err
	}
	if err := e.Delete(ctx, e.A1, holder); err != nil {
		return err
	}
	adopted, err := e.edgeImport(ctx, e.A1, other, "WorkerCustomDomain", name, spelled)
	if err != nil {
		return fmt.Errorf("the same adoption once the holder released the hostname: %w", err)
	}
	if got := edgeHostnameOf(adopted.Spec); got != canonical {
		return fmt.Errorf("the adoption stored hostname %q, want the canonical %q", got, canonical)
	}
	// The adopted claim binds like an applied one.
	_, err = e.edgeTryCreate(ctx, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(fw, canonical))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("claiming a hostname an imported domain holds: %w", err)
	}
	// Single consumer and dead-letter acyclicity.
	qa, err := e.DeployApp(ctx, e.A1, "queue")
	if err != nil {
		return err
	}
	qw := qa.Worker.Metadata.Name
	q2, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	q3, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	if _, err := e.edgeImport(ctx, e.A1, e.Space, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(qw, qn, q2.Metadata.Name)); err != nil {
		return fmt.Errorf("importing a consumer dead-lettering onward: %w", err)
	}
	if err := e.edgeRefuseImport(ctx, "QueueConsumer", e.edgeQueueConsumerSpec(qw, qn, ""), wire.InvalidArgument, "a second consumer of one queue"); err != nil {
		return err
	}
	if err := e.edgeRefuseImport(ctx, "QueueConsumer", e.edgeQueueConsumerSpec(qw, q2.Metadata.Name, qn), wire.InvalidArgument, "a consumer closing a dead-letter cycle"); err != nil {
		return err
	}
	if _, err := e.edgeImport(ctx, e.A1, e.Space, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(qw, q2.Metadata.Name, q3.Metadata.Name)); err != nil {
		return fmt.Errorf("importing a consumer whose dead-letter chain closes no cycle: %w", err)
	}
	return nil
}

// edgeAcceptAsync prepares a create and applies it with the conformance
// probe forcing a 202; it returns the pending operation's id.
func (e *Env) edgeAcceptAsync(ctx context.Context, kind, name string, spec any) (string, error) {
	req, err := e.Request(kind, name, spec)
	if err != nil {
		return "", err
	}
	p, err := e.A1.Prepare(ctx, req, "")
	if err != nil {
		return "", fmt.Errorf("prepare %s: %w", kind, err)
	}
	body, err := json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}})
	if err != nil {
		return "", err
	}
	r, err := e.Do(ctx, e.Creds.A1, "PUT", ResourcePath(req.Form.FormRef, name, ""), map[string]string{
		wire.HeaderIdempotency: "conformance-" + randomHex(8), "If-None-Match": "*", wire.HeaderProbe: "async"}, body)
	if err != nil {
		return "", err
	}
	var env wire.OperationEnvelope
	if r.Status != 202 || json.Unmarshal(r.Body, &env) != nil || env.Operation.ID == "" {
		return "", fmt.Errorf("an apply forced async answered HTTP %d, want 202 with an operation: %s", r.Status, abbreviate(r.Body))
	}
	if env.Operation.Done {
		return "", fmt.Errorf("the 202 operation %s is already terminal; nothing could be revalidated", env.Operation.ID)
	}
	return env.Operation.ID, nil
}

// edgeAcceptDelete deletes res with the conformance probe forcing a 202;
// it returns the pending operation's id.
func (e *Env) edgeAcceptDelete(ctx context.Context, res *wire.Resource) (string, error) {
	r, err := e.Do(ctx, e.Creds.A1, "DELETE", ResourcePath(res.Form.FormRef, res.Metadata.Name, "")+ExactQuery(res.Metadata.Space, res.Form.FormRef),
		map[string]string{wire.HeaderIdempotency: "conformance-" + randomHex(8), wire.HeaderGeneration: res.Metadata.Generation, wire.HeaderProbe: "async"}, nil)
	if err != nil {
		return "", err
	}
	var env wire.OperationEnvelope
	if r.Status != 202 || json.Unmarshal(r.Body, &env) != nil || env.Operation.ID == "" || env.Operation.Done {
		return "", fmt.Errorf("a delete forced async answered HTTP %d, want 202 with a pending operation: %s", r.Status, abbreviate(r.Body))
	}
	return env.Operation.ID, nil
}

// edgeCommitRefused waits for an accepted create and checks it failed
// with code, stored nothing, and that survivor (the mutation that broke
// it) is still live.
func (e *Env) edgeCommitRefused(ctx context.Context, opID, kind, name string, code wire.Code, survivor any, what string) error {
	_, err := e.A1.WaitOperation(ctx, opID)
	if err := edgeRefused(err, code); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := e.edgeAbsent(ctx, e.A1, e.Space, kind, name); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res, ok := survivor.(*wire.Resource); ok {
		if _, err := e.edgeRead(ctx, e.A1, res); err != nil {
			return fmt.Errorf("the mutation that legitimately moved the store did not survive: %w", err)
		}
	}
	return nil
}

// edgeRaceLost explains a refused store move: when the accepted operation
// had already committed (the host's 202 window closed before the move),
// nothing was left to revalidate and the check cannot decide; otherwise
// err stands.
func (e *Env) edgeRaceLost(ctx context.Context, opID string, err error) error {
	op, oerr := e.A1.Operation(ctx, opID)
	if oerr == nil && op.Done && op.Error == nil {
		return skipf("operation %s committed before a synchronous request could move the store (%v); the host's 202 window is too short to revalidate anything", opID, err)
	}
	return err
}

func attachmentClaimAtCommit(ctx context.Context, e *Env) error {
	if !e.Probe {
		return skipf("needs the conformance probe to hold a mutation accepted")
	}
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	// Hostname: taken by a synchronous create while the claim is pending.
	h := edgeHostname("commit")
	name := e.Name("domain")
	op, err := e.edgeAcceptAsync(ctx, "WorkerCustomDomain", name, e.edgeDomainSpec(wn, h))
	if err != nil {
		return err
	}
	taker, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(wn, strings.ToUpper(h)))
	if err != nil {
		return e.edgeRaceLost(ctx, op, fmt.Errorf("taking the hostname while the accepted claim is pending: %w", err))
	}
	if err := e.edgeCommitRefused(ctx, op, "WorkerCustomDomain", name, wire.InvalidArgument, taker, "an accepted claim on a hostname taken before commit"); err != nil {
		return err
	}
	// Dead letters: B -> A pending, A -> B applied; only the commit sees the loop.
	qa, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	qb, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	c, err := e.DeployApp(ctx, e.A1, "queue")
	if err != nil {
		return err
	}
	cw := c.Worker.Metadata.Name
	name = e.Name("consumer")
	if op, err = e.edgeAcceptAsync(ctx, "QueueConsumer", name, e.edgeQueueConsumerSpec(cw, qb.Metadata.Name, qa.Metadata.Name)); err != nil {
		return err
	}
	closing, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(cw, qa.Metadata.Name, qb.Metadata.Name))
	if err != nil {
		return e.edgeRaceLost(ctx, op, fmt.Errorf("the consumer closing the cycle only in combination: %w", err))
	}
	if err := e.edgeCommitRefused(ctx, op, "QueueConsumer", name, wire.InvalidArgument, closing, "an accepted consumer whose dead-letter queue acquired a path home before commit"); err != nil {
		return err
	}
	// Gate: the deployment serving the pending endpoint is deleted first.
	if err := e.Delete(ctx, e.A1, taker); err != nil {
		return err
	}
	name = e.Name("endpoint")
	if op, err = e.edgeAcceptAsync(ctx, "WorkerEndpoint", name, map[string]any{"worker": e.Rel("ModuleWorker", wn)}); err != nil {
		return err
	}
	if err := e.edgeTryDelete(ctx, e.A1, e.Creds.A1, a.Deployment, nil); err != nil {
		return e.edgeRaceLost(ctx, op, fmt.Errorf("deleting the deployment while the endpoint is only pending: %w", err))
	}
	return e.edgeCommitRefused(ctx, op, "WorkerEndpoint", name, wire.UnsupportedCapability, nil, "an accepted endpoint whose worker lost its deployment before commit")
}
