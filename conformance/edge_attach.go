package conformance

import (
	"context"
	"fmt"

	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "attachment-requires-active-deployment", Group: "edge", Summary: "an attachment of a worker with no active deployment is unsupported_capability", Run: attachmentRequiresDeployment},
		Check{ID: "handler-gated-attachments", Group: "edge", Summary: "an attachment needs its handler exported by every weighted version of the active deployment", Run: handlerGatedAttachments},
		Check{ID: "cron-grammar-enforced", Group: "edge", Summary: "a cron that is not a five-field numeric UTC schedule is refused on validate, prepare, apply and import", Run: cronGrammarEnforced},
		Check{ID: "queue-single-consumer-enforced", Group: "edge", Summary: "a queue has at most one QueueConsumer; naming it as a dead-letter queue does not consume it", Run: queueSingleConsumer},
		Check{ID: "dead-letter-cycle-rejected", Group: "edge", Summary: "a dead-letter chain leading back to the drained queue is refused, at any length", Run: deadLetterCycle},
	)
}

// edgeAttachmentKinds are the four attachment kinds and the handler each
// needs (spec/host-api-v1alpha3.md §6.5).
var edgeAttachmentKinds = []struct{ kind, handler string }{
	{"WorkerEndpoint", "fetch"}, {"WorkerCustomDomain", "fetch"}, {"WorkerCronTrigger", "scheduled"}, {"QueueConsumer", "queue"},
}

func attachmentRequiresDeployment(ctx context.Context, e *Env) error {
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	wn := w.Metadata.Name
	all := []string{"fetch", "scheduled", "queue"}
	v, err := e.edgeVersion(ctx, e.A1, e.Space, wn, all, all, nil)
	if err != nil {
		return err
	}
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	for _, a := range edgeAttachmentKinds {
		name := e.Name("att")
		_, err := e.edgeTryCreate(ctx, a.kind, name, e.edgeAttachmentSpec(a.kind, wn, q.Metadata.Name))
		if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
			return fmt.Errorf("%s of a worker whose version exports %s but has no deployment: %w", a.kind, a.handler, err)
		}
		if err := e.edgeAbsent(ctx, e.A1, e.Space, a.kind, name); err != nil {
			return err
		}
	}
	d, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(wn, edgeWeighted{v.Metadata.Name, 10000}))
	if err != nil {
		return err
	}
	if e.Probe {
		// A deployment an accepted delete targets is being removed (spec/host-api-v1alpha3.md §4):
		// it serves no new attachment.
		op, err := e.edgeAcceptDelete(ctx, d)
		if err != nil {
			return err
		}
		name := e.Name("att")
		_, err = e.edgeTryCreate(ctx, "WorkerEndpoint", name, e.edgeAttachmentSpec("WorkerEndpoint", wn, ""))
		if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
			return e.edgeRaceLost(ctx, op, fmt.Errorf("an endpoint of a worker whose deployment an accepted delete targets: %w", err))
		}
		if _, err := e.A1.WaitOperation(ctx, op); err != nil {
			return fmt.Errorf("the accepted delete of the deployment: %w", err)
		}
		if d, err = e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(wn, edgeWeighted{v.Metadata.Name, 10000})); err != nil {
			return err
		}
	}
	for _, a := range edgeAttachmentKinds {
		if _, err := e.Create(ctx, e.A1, a.kind, e.Name("att"), e.edgeAttachmentSpec(a.kind, wn, q.Metadata.Name)); err != nil {
			return fmt.Errorf("%s once the worker's deployment %s serves %s: %w", a.kind, d.Metadata.Name, a.handler, err)
		}
	}
	return nil
}

func handlerGatedAttachments(ctx context.Context, e *Env) error {
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	// Each single-handler worker serves exactly the attachments needing it.
	for _, h := range []string{"fetch", "scheduled", "queue"} {
		a, err := e.DeployApp(ctx, e.A1, h)
		if err != nil {
			return err
		}
		for _, att := range edgeAttachmentKinds {
			name := e.Name("att")
			spec := e.edgeAttachmentSpec(att.kind, a.Worker.Metadata.Name, q.Metadata.Name)
			if att.handler == h {
				res, err := e.Create(ctx, e.A1, att.kind, name, spec)
				if err != nil {
					return fmt.Errorf("%s of a worker serving %s: %w", att.kind, h, err)
				}
				if err := e.Delete(ctx, e.A1, res); err != nil { // frees the queue for the next worker
					return err
				}
				continue
			}
			_, err := e.edgeTryCreate(ctx, att.kind, name, spec)
			if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
				return fmt.Errorf("%s (needs %s) of a worker serving only %s: %w", att.kind, att.handler, h, err)
			}
			if err := e.edgeAbsent(ctx, e.A1, e.Space, att.kind, name); err != nil {
				return err
			}
		}
	}
	// Traffic split: every weighted version must export the handler.
	a, err := e.DeployApp(ctx, e.A1, "fetch", "scheduled", "queue")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	fetch := []string{"fetch"}
	v2, err := e.edgeVersion(ctx, e.A1, e.Space, wn, fetch, fetch, nil)
	if err != nil {
		return err
	}
	if _, err := e.Update(ctx, e.A1, a.Deployment, e.edgeDeploymentSpec(wn, edgeWeighted{a.Version.Metadata.Name, 9999}, edgeWeighted{v2.Metadata.Name, 1})); err != nil {
		return fmt.Errorf("split traffic 9999/1: %w", err)
	}
	for _, att := range edgeAttachmentKinds {
		name := e.Name("att")
		spec := e.edgeAttachmentSpec(att.kind, wn, q.Metadata.Name)
		if att.handler == "fetch" {
			if _, err := e.Create(ctx, e.A1, att.kind, name, spec); err != nil {
				return fmt.Errorf("%s when every weighted version exports fetch: %w", att.kind, err)
			}
			continue
		}
		_, err := e.edgeTryCreate(ctx, att.kind, name, spec)
		if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
			return fmt.Errorf("%s when a version weighted 1 of 10000 lacks %s: %w", att.kind, att.handler, err)
		}
	}
	// A version may export more than it declares; only declared handlers serve.
	w, err := e.Create(ctx, e.A1, "ModuleWorker", e.Name("worker"), map[string]any{})
	if err != nil {
		return err
	}
	v, err := e.edgeVersion(ctx, e.A1, e.Space, w.Metadata.Name, []string{"fetch", "scheduled"}, fetch, nil)
	if err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "WorkerDeployment", e.Name("deploy"), e.edgeDeploymentSpec(w.Metadata.Name, edgeWeighted{v.Metadata.Name, 10000})); err != nil {
		return err
	}
	_, err = e.edgeTryCreate(ctx, "WorkerCronTrigger", e.Name("att"), e.edgeAttachmentSpec("WorkerCronTrigger", w.Metadata.Name, ""))
	if err := edgeRefused(err, wire.UnsupportedCapability); err != nil {
		return fmt.Errorf("a cron trigger of a worker whose version exports but does not declare scheduled: %w", err)
	}
	return nil
}

// edgeBadCrons are expressions the cron grammar refuses (spec/host-api-v1alpha3.md §6.5).
var edgeBadCrons = []string{
	"61 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *", "* * * 0 *", "* * * * 7",
	"* * * * MON", "* * * JAN *", "0 0 * * * *", "* * * *", "", "@hourly",
	"30-10 * * * *", "5/15 * * * *", "*/0 * * * *", "*/61 * * * *", "0-10/12 * * * *",
	"1,,2 * * * *", "*  * * * *", " * * * * *", "-1 * * * *", "100 * * * *",
}

// edgeGoodCrons are schedules every host accepts.
var edgeGoodCrons = []string{"*/15 * * * *", "0 9-17 * * 1-5", "0,30 0 1 1 0", "0 0 1-31/2 * *", "59 23 31 12 6", "0-10/11 * * * *"}

func cronGrammarEnforced(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "scheduled")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	spec := func(cron string) map[string]any {
		return map[string]any{"worker": e.Rel("ModuleWorker", wn), "cron": cron}
	}
	for _, c := range edgeGoodCrons {
		req, err := e.Request("WorkerCronTrigger", e.Name("cron"), spec(c))
		if err != nil {
			return err
		}
		v, err := e.A1.Validate(ctx, req)
		if err != nil {
			return err
		}
		if !v.Valid {
			return fmt.Errorf("validate refused the schedule %q: %v", c, v.Diagnostics)
		}
	}
	for _, c := range edgeBadCrons {
		if err := e.edgeSpecRefused(ctx, "WorkerCronTrigger", spec(c), fmt.Sprintf("cron %q (the grammar: five numeric UTC fields in range, ascending ranges, and a step from 1 to its range's span)", c)); err != nil {
			return err
		}
	}
	t, err := e.Create(ctx, e.A1, "WorkerCronTrigger", e.Name("cron"), spec(edgeGoodCrons[1]))
	if err != nil {
		return fmt.Errorf("a trigger on %q: %w", edgeGoodCrons[1], err)
	}
	if _, err := e.edgeImport(ctx, e.A1, e.Space, "WorkerCronTrigger", e.Name("cron"), spec(edgeGoodCrons[0])); err != nil {
		return fmt.Errorf("importing a trigger on %q: %w", edgeGoodCrons[0], err)
	}
	_, err = e.edgeTryUpdate(ctx, t, spec("0 0 * * * *"))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("updating a trigger to six fields: %w", err)
	}
	if _, err := e.Update(ctx, e.A1, t, spec(edgeGoodCrons[2])); err != nil {
		return fmt.Errorf("updating a trigger to %q: %w", edgeGoodCrons[2], err)
	}
	return nil
}

func queueSingleConsumer(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "queue")
	if err != nil {
		return err
	}
	b, err := e.DeployApp(ctx, e.A1, "queue")
	if err != nil {
		return err
	}
	q, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	q2, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	qn := q.Metadata.Name
	first, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(a.Worker.Metadata.Name, qn, ""))
	if err != nil {
		return fmt.Errorf("the first consumer of a queue: %w", err)
	}
	for _, w := range []*wire.Resource{a.Worker, b.Worker} {
		name := e.Name("consumer")
		_, err := e.edgeTryCreate(ctx, "QueueConsumer", name, e.edgeQueueConsumerSpec(w.Metadata.Name, qn, ""))
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("a second consumer of queue %s (worker %s): %w", qn, w.Metadata.Name, err)
		}
		if err := e.edgeAbsent(ctx, e.A1, e.Space, "QueueConsumer", name); err != nil {
			return err
		}
		_, err = e.edgeImport(ctx, e.A1, e.Space, "QueueConsumer", name, e.edgeQueueConsumerSpec(w.Metadata.Name, qn, ""))
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("importing a second consumer of queue %s: %w", qn, err)
		}
	}
	// Naming the queue as a dead-letter queue is not consuming it.
	if _, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(b.Worker.Metadata.Name, q2.Metadata.Name, qn)); err != nil {
		return fmt.Errorf("a consumer of another queue dead-lettering into %s: %w", qn, err)
	}
	// A consumer's queue is immutable: it cannot be moved to a free queue.
	q3, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name("queue"), edgeQueueSpec())
	if err != nil {
		return err
	}
	_, err = e.edgeTryUpdate(ctx, first, e.edgeQueueConsumerSpec(a.Worker.Metadata.Name, q3.Metadata.Name, ""))
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("moving the consumer of %s to another queue: a consumer's queue is an immutable field, changed only by replacement, so the update must be refused: %w", qn, err)
	}
	// Re-applying the one consumer is fine; it keeps its queue.
	if _, err := e.Update(ctx, e.A1, first, e.edgeQueueConsumerSpec(a.Worker.Metadata.Name, qn, "")); err != nil {
		return fmt.Errorf("re-applying the queue's consumer: %w", err)
	}
	if err := e.Delete(ctx, e.A1, first); err != nil {
		return err
	}
	if _, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), e.edgeQueueConsumerSpec(b.Worker.Metadata.Name, qn, "")); err != nil {
		return fmt.Errorf("a consumer once the first was deleted: %w", err)
	}
	return nil
}

func deadLetterCycle(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "queue")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	q := make([]string, 5)
	for i := 1; i < len(q); i++ {
		r, err := e.Create(ctx, e.A1, "AtLeastOnceQueue", e.Name(fmt.Sprintf("q%d", i)), edgeQueueSpec())
		if err != nil {
			return err
		}
		q[i] = r.Metadata.Name
	}
	refuse := func(what string, spec map[string]any, cur *wire.Resource) error {
		var err error
		if cur == nil {
			name := e.Name("consumer")
			_, err = e.edgeTryCreate(ctx, "QueueConsumer", name, spec)
			if err := edgeRefused(err, wire.InvalidArgument); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return e.edgeAbsent(ctx, e.A1, e.Space, "QueueConsumer", name)
		}
		_, err = e.edgeTryUpdate(ctx, cur, spec)
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	create := func(what string, spec map[string]any) (*wire.Resource, error) {
		r, err := e.Create(ctx, e.A1, "QueueConsumer", e.Name("consumer"), spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return r, nil
	}
	c1, err := create("q1 dead-lettering into q2", e.edgeQueueConsumerSpec(wn, q[1], q[2]))
	if err != nil {
		return err
	}
	if err := refuse("q3 dead-lettering into itself", e.edgeQueueConsumerSpec(wn, q[3], q[3]), nil); err != nil {
		return err
	}
	if err := refuse("q2 dead-lettering into q1 (q1 -> q2 -> q1)", e.edgeQueueConsumerSpec(wn, q[2], q[1]), nil); err != nil {
		return err
	}
	c2, err := create("q2 dead-lettering into q3", e.edgeQueueConsumerSpec(wn, q[2], q[3]))
	if err != nil {
		return err
	}
	if err := refuse("q3 dead-lettering into q1 (q1 -> q2 -> q3 -> q1)", e.edgeQueueConsumerSpec(wn, q[3], q[1]), nil); err != nil {
		return err
	}
	if _, err := create("q4 dead-lettering into q2 (a diamond, not a cycle)", e.edgeQueueConsumerSpec(wn, q[4], q[2])); err != nil {
		return err
	}
	if err := refuse("updating q2's dead-letter queue to q1 (q1 -> q2 -> q1)", e.edgeQueueConsumerSpec(wn, q[2], q[1]), c2); err != nil {
		return err
	}
	// The walk follows the chain as stored now: once q1 drops its
	// dead-letter queue, q3 -> q1 ends there.
	if _, err := e.Update(ctx, e.A1, c1, e.edgeQueueConsumerSpec(wn, q[1], "")); err != nil {
		return fmt.Errorf("dropping q1's dead-letter queue: %w", err)
	}
	if _, err := create("q3 dead-lettering into q1 once q1 drops messages", e.edgeQueueConsumerSpec(wn, q[3], q[1])); err != nil {
		return err
	}
	return nil
}
