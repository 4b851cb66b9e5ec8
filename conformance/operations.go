package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "async-operation-flow", Group: "operations", Summary: "an accepted mutation answers 202 with a pending operation that polls, honouring Retry-After, to its result resource", Run: asyncOperationFlow},
		Check{ID: "operation-replay-terminal", Group: "operations", Summary: "a terminal operation answers byte-identically, even after later mutations and other operations", Run: operationReplayTerminal},
		Check{ID: "operation-resumable-after-settlement", Group: "operations", Summary: "a lost 202 replays the same operation, which still answers its result after it settled", Run: operationResumable},
		Check{ID: "operation-cancel", Group: "operations", Summary: "cancelling a pending operation ends it operation_cancelled and commits nothing", Run: operationCancel},
	)
}

var rxOperationID = regexp.MustCompile(`^op_[A-Za-z0-9][A-Za-z0-9._-]{0,124}$`)

// rxProbeHeaders are the headers of a probe-forced asynchronous request.
func rxProbeHeaders(e *Env, extra map[string]string) (map[string]string, error) {
	if !e.Probe {
		return nil, skipf("forcing an accepted (202) mutation needs the conformance probe")
	}
	h := map[string]string{wire.HeaderProbe: "async", wire.HeaderIdempotency: "async-" + randomHex(8)}
	for k, v := range extra {
		h[k] = v
	}
	return h, nil
}

// rxPrepared prepares req as c (gen "" for a create) and returns the
// apply body for it.
func rxPrepared(ctx context.Context, c *client.Client, req wire.ResourceRequest, gen string) ([]byte, error) {
	p, err := c.Prepare(ctx, req, gen)
	if err != nil {
		return nil, fmt.Errorf("prepare %s %q: %w", req.Kind, req.Metadata.Name, err)
	}
	return json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}})
}

// rxPut sends an apply body as token: a create (If-None-Match: *) when
// gen is "", else an update fenced on gen.
func rxPut(ctx context.Context, e *Env, token string, ref form.FormRef, name, gen string, body []byte, headers map[string]string) (*Raw, error) {
	h := map[string]string{}
	for k, v := range headers {
		h[k] = v
	}
	if gen == "" {
		h["If-None-Match"] = "*"
	} else {
		h[wire.HeaderGeneration] = gen
	}
	if h[wire.HeaderIdempotency] == "" {
		h[wire.HeaderIdempotency] = "put-" + randomHex(8)
	}
	return e.Do(ctx, token, http.MethodPut, ResourcePath(ref, name, ""), h, body)
}

// rxAccepted decodes a 202 answer into its pending operation.
func rxAccepted(r *Raw) (*wire.Operation, error) {
	if r.Status != http.StatusAccepted {
		return nil, fmt.Errorf("answered HTTP %d, want 202 with an operation: %s", r.Status, abbreviate(r.Body))
	}
	var env wire.OperationEnvelope
	if err := rxStrict(r.Body, &env); err != nil {
		return nil, fmt.Errorf("the 202 body is not {\"operation\": …}: %w", err)
	}
	op := &env.Operation
	if err := rxCheckOperation(op); err != nil {
		return nil, fmt.Errorf("the accepted operation: %w", err)
	}
	return op, nil
}

// rxStrict decodes b into v refusing unknown members.
func rxStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// rxCheckOperation checks an Operation's identity and done/result/error
// states (spec/host-api-v1alpha3.md §4).
func rxCheckOperation(op *wire.Operation) error {
	switch {
	case op.APIVersion != wire.OperationsAPI || op.Kind != wire.OperationKind:
		return fmt.Errorf("apiVersion %q kind %q, want %s %s", op.APIVersion, op.Kind, wire.OperationsAPI, wire.OperationKind)
	case !rxOperationID.MatchString(op.ID):
		return fmt.Errorf("id %q is not an operation id", op.ID)
	case !op.Done && (len(op.Result) > 0 || op.Error != nil):
		return errors.New("a pending operation carries a result or an error")
	case op.Done && (len(op.Result) > 0) == (op.Error != nil):
		return errors.New("a done operation must carry exactly one of result and error")
	case op.Error != nil && op.Error.Retryable && !wire.Taxonomy[op.Error.Code].Retryable:
		return fmt.Errorf("operation error %s is marked retryable", op.Error.Code)
	}
	if op.Error != nil {
		if _, ok := wire.Taxonomy[op.Error.Code]; !ok || op.Error.Message == "" {
			return fmt.Errorf("operation error code %q is outside the taxonomy or has no message", op.Error.Code)
		}
	}
	return nil
}

// rxRetryAfter parses a Retry-After header as delta-seconds.
func rxRetryAfter(h http.Header) (time.Duration, bool) {
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// rxGetOperation reads an operation raw as token.
func rxGetOperation(ctx context.Context, e *Env, token, id string) (*Raw, *wire.Operation, error) {
	r, err := e.Do(ctx, token, http.MethodGet, "/operations/"+id, nil, nil)
	if err != nil || r.Status != http.StatusOK {
		if err == nil {
			err = fmt.Errorf("GET /operations/%s answered HTTP %d: %s", id, r.Status, abbreviate(r.Body))
		}
		return r, nil, err
	}
	var op wire.Operation
	if err := rxStrict(r.Body, &op); err != nil {
		return r, nil, fmt.Errorf("GET /operations/%s is not a bare Operation: %w", id, err)
	}
	if err := rxCheckOperation(&op); err != nil {
		return r, nil, fmt.Errorf("GET /operations/%s: %w", id, err)
	}
	if op.ID != id {
		return r, nil, fmt.Errorf("GET /operations/%s answered operation %s", id, op.ID)
	}
	return r, &op, nil
}

// rxPoll polls the operation of a 202 answer as token until it is done
// and returns the terminal operation and its raw answer. The first poll
// follows the 202 at once: a 202 carries no Retry-After requirement, every
// pending poll does (delta-seconds, waited out before the next poll;
// spec/conformance-probe.md §2).
func rxPoll(ctx context.Context, e *Env, token string, accepted *Raw) (*wire.Operation, *Raw, error) {
	op, err := rxAccepted(accepted)
	if err != nil {
		return nil, nil, err
	}
	if op.Done {
		return op, accepted, nil
	}
	wait, ok := time.Duration(0), true
	id := op.ID
	for {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("operation %s did not finish: %w", id, ctx.Err())
		case <-time.After(wait):
		}
		r, op, err := rxGetOperation(ctx, e, token, id)
		if err != nil {
			return nil, nil, err
		}
		if op.Done {
			return op, r, nil
		}
		if wait, ok = rxRetryAfter(r.Header); !ok {
			return nil, nil, fmt.Errorf("a pending poll of %s carries Retry-After %q; the lane requires delta-seconds on every pending poll (spec/host-api-v1alpha3.md §3.2)", id, r.Header.Get("Retry-After"))
		}
	}
}

// rxAsyncCreate prepares a create of name under ref as A1 and sends it
// with the async probe; it returns the 202 answer and the apply body.
// rxAsyncWorker asks for a probe-forced asynchronous create of a fresh
// ModuleWorker and returns its ref, name and the 202 answer.
func rxAsyncWorker(ctx context.Context, e *Env) (form.FormRef, string, *Raw, error) {
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return ref, "", nil, err
	}
	name := e.Name("worker")
	accepted, _, _, err := rxAsyncCreate(ctx, e, ref, name, map[string]any{})
	return ref, name, accepted, err
}

func rxAsyncCreate(ctx context.Context, e *Env, ref form.FormRef, name string, spec any) (*Raw, []byte, map[string]string, error) {
	h, err := rxProbeHeaders(e, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	body, err := rxPrepared(ctx, e.A1, e.RequestIn(e.Space, ref, name, spec), "")
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := rxPut(ctx, e, e.Creds.A1, ref, name, "", body, h)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := rxAccepted(r); err != nil {
		return nil, nil, nil, fmt.Errorf("a probe-forced async create: %w", err)
	}
	return r, body, h, nil
}

// rxResultResource checks a succeeded operation's result resource is the
// one addressed and returns it.
func rxResultResource(op *wire.Operation, a client.Address, uid string) (*wire.Resource, error) {
	if op.Error != nil {
		return nil, fmt.Errorf("operation %s failed: %s: %s", op.ID, op.Error.Code, op.Error.Message)
	}
	res, err := client.ResourceResult(op, a, uid)
	if err != nil {
		return nil, fmt.Errorf("operation %s result: %w", op.ID, err)
	}
	return res, nil
}

func asyncOperationFlow(ctx context.Context, e *Env) error {
	ref, name, accepted, err := rxAsyncWorker(ctx, e)
	if err != nil {
		return err
	}
	first, _ := rxAccepted(accepted)
	if first.Done {
		return skipf("the host finished the probe-forced operation before answering")
	}
	if accepted.Header.Get("ETag") != "" {
		return fmt.Errorf("a 202 carries ETag %q; it represents no resource", accepted.Header.Get("ETag"))
	}
	// Polling the operation answers the bare Operation.
	r, op, err := rxGetOperation(ctx, e, e.Creds.A1, first.ID)
	if err != nil {
		return err
	}
	if !op.Done {
		if _, ok := rxRetryAfter(r.Header); !ok {
			return fmt.Errorf("a pending poll carries Retry-After %q; the lane requires delta-seconds on every pending poll (spec/host-api-v1alpha3.md §3.2)", r.Header.Get("Retry-After"))
		}
	}
	done, _, err := rxPoll(ctx, e, e.Creds.A1, accepted)
	if err != nil {
		return err
	}
	addr := client.Address{Space: e.Space, Ref: ref, Name: name}
	res, err := rxResultResource(done, addr, "")
	if err != nil {
		return err
	}
	if res.Metadata.Generation != "1" || res.Metadata.Revision == "" {
		return fmt.Errorf("the created result is at generation %q revision %q, want generation 1", res.Metadata.Generation, res.Metadata.Revision)
	}
	if done.Target != nil && done.Target.UID != "" && done.Target.UID != res.Metadata.UID {
		return fmt.Errorf("operation target.uid %s is not the result's uid %s", done.Target.UID, res.Metadata.UID)
	}
	read, err := e.A1.Read(ctx, addr)
	if err != nil {
		return fmt.Errorf("read after the operation succeeded: %w", err)
	}
	if read.Metadata.UID != res.Metadata.UID {
		return fmt.Errorf("the result names uid %s but the resource is %s", res.Metadata.UID, read.Metadata.UID)
	}
	// The client's own wait reaches the same result.
	op2, err := e.A1.WaitOperation(ctx, first.ID)
	if err != nil {
		return fmt.Errorf("client wait: %w", err)
	}
	if _, err := rxResultResource(op2, addr, res.Metadata.UID); err != nil {
		return err
	}
	return nil
}

func operationReplayTerminal(ctx context.Context, e *Env) error {
	ref, name, accepted, err := rxAsyncWorker(ctx, e)
	if err != nil {
		return err
	}
	done, final, err := rxPoll(ctx, e, e.Creds.A1, accepted)
	if err != nil {
		return err
	}
	res, err := rxResultResource(done, client.Address{Space: e.Space, Ref: ref, Name: name}, "")
	if err != nil {
		return err
	}
	same := func(when string) error {
		r, _, err := rxGetOperation(ctx, e, e.Creds.A1, done.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", when, err)
		}
		if !bytes.Equal(r.Body, final.Body) {
			return fmt.Errorf("%s the terminal operation answered other bytes:\n%s\nwas\n%s", when, abbreviate(r.Body), abbreviate(final.Body))
		}
		return nil
	}
	if err := same("polled again"); err != nil {
		return err
	}
	// Later mutations of the same name, and another operation settling,
	// change nothing about it.
	if err := rxDelete(ctx, e, e.Creds.A1, res); err != nil {
		return fmt.Errorf("delete the result: %w", err)
	}
	again, _, _, err := rxAsyncCreate(ctx, e, ref, name, map[string]any{})
	if err != nil {
		return err
	}
	if _, _, err := rxPoll(ctx, e, e.Creds.A1, again); err != nil {
		return err
	}
	if err := same("after the resource was deleted and re-created by another operation"); err != nil {
		return err
	}
	// Cancelling a terminal operation replays its terminal state.
	c, err := e.Do(ctx, e.Creds.A1, http.MethodPost, "/operations/"+done.ID+"/cancel", map[string]string{wire.HeaderIdempotency: "cancel-" + randomHex(8)}, nil)
	if err != nil {
		return err
	}
	if c.Status != http.StatusOK || !bytes.Equal(c.Body, final.Body) {
		return fmt.Errorf("cancelling the terminal operation answered HTTP %d %s, want 200 and its terminal state", c.Status, abbreviate(c.Body))
	}
	return same("after a cancel")
}

func operationResumable(ctx context.Context, e *Env) error {
	ref, err := e.Ref("ModuleWorker")
	if err != nil {
		return err
	}
	name := e.Name("worker")
	accepted, body, h, err := rxAsyncCreate(ctx, e, ref, name, map[string]any{})
	if err != nil {
		return err
	}
	first, _ := rxAccepted(accepted)
	addr := client.Address{Space: e.Space, Ref: ref, Name: name}
	// Retrying the lost request replays the same 202, never a second
	// create: while the operation is pending, and after it settled (by
	// polls: the check never waits on a clock, spec/conformance-probe.md §2).
	replays := func(when string) error {
		retry, err := rxPut(ctx, e, e.Creds.A1, ref, name, "", body, h)
		if err != nil {
			return err
		}
		if retry.Status != accepted.Status || !bytes.Equal(retry.Body, accepted.Body) {
			return fmt.Errorf("%s the retried request answered HTTP %d %s, want the recorded 202 %s (an Idempotency-Key replays its recorded answer, spec/host-api-v1alpha3.md §3.5)", when, retry.Status, abbreviate(retry.Body), abbreviate(accepted.Body))
		}
		return nil
	}
	if err := replays("while the operation is pending,"); err != nil {
		return err
	}
	if _, _, err := rxPoll(ctx, e, e.Creds.A1, accepted); err != nil {
		return err
	}
	live, err := e.A1.Read(ctx, addr)
	if err != nil {
		return fmt.Errorf("read after the operation settled: %w", err)
	}
	if err := replays("after the operation settled,"); err != nil {
		return err
	}
	// The operation is still addressable and names the settled result.
	op, err := e.A1.Operation(ctx, first.ID)
	if err != nil {
		return fmt.Errorf("the settled operation: %w", err)
	}
	if !op.Done {
		return fmt.Errorf("operation %s is still pending after its resource committed", op.ID)
	}
	res, err := rxResultResource(op, addr, live.Metadata.UID)
	if err != nil {
		return err
	}
	now, err := e.A1.Read(ctx, addr)
	if err != nil {
		return err
	}
	if now.Metadata.UID != res.Metadata.UID || now.Metadata.Generation != "1" {
		return fmt.Errorf("after the retry the resource is uid %s generation %s; want the operation's uid %s at generation 1",
			now.Metadata.UID, now.Metadata.Generation, res.Metadata.UID)
	}
	return nil
}

func operationCancel(ctx context.Context, e *Env) error {
	ref, name, accepted, err := rxAsyncWorker(ctx, e)
	if err != nil {
		return err
	}
	first, _ := rxAccepted(accepted)
	if first.Done {
		return skipf("the host finished the probe-forced operation before answering")
	}
	key := "cancel-" + randomHex(8)
	cancel := func(key string) (*Raw, error) {
		return e.Do(ctx, e.Creds.A1, http.MethodPost, "/operations/"+first.ID+"/cancel", map[string]string{wire.HeaderIdempotency: key}, nil)
	}
	c, err := cancel(key)
	if err != nil {
		return err
	}
	if c.Status != http.StatusOK {
		return fmt.Errorf("cancel answered HTTP %d: %s", c.Status, abbreviate(c.Body))
	}
	var op wire.Operation
	if err := rxStrict(c.Body, &op); err != nil {
		return fmt.Errorf("cancel must answer the bare Operation: %w", err)
	}
	if err := rxCheckOperation(&op); err != nil {
		return err
	}
	if !op.Done || op.Error == nil || op.Error.Code != wire.OperationCancelled || op.Error.Retryable {
		return fmt.Errorf("a cancelled pending operation reads %s, want done with error operation_cancelled (not retryable)", abbreviate(c.Body))
	}
	// Past the time it would have committed, nothing was created and the
	// operation stays cancelled, byte for byte.
	time.Sleep(time.Second)
	if err := rxAbsent(ctx, e, e.A1, ref, name, "after a cancelled create"); err != nil {
		return err
	}
	r, _, err := rxGetOperation(ctx, e, e.Creds.A1, first.ID)
	if err != nil {
		return err
	}
	if !bytes.Equal(r.Body, c.Body) {
		return fmt.Errorf("the cancelled operation now reads %s, was %s", abbreviate(r.Body), abbreviate(c.Body))
	}
	for _, k := range []string{key, "cancel-" + randomHex(8)} {
		again, err := cancel(k)
		if err != nil {
			return err
		}
		if again.Status != http.StatusOK || !bytes.Equal(again.Body, c.Body) {
			return fmt.Errorf("cancelling again answered HTTP %d %s, want the terminal state", again.Status, abbreviate(again.Body))
		}
	}
	// The name is free: a create succeeds.
	if _, err := e.Create(ctx, e.A1, "ModuleWorker", name, map[string]any{}); err != nil {
		return fmt.Errorf("create after a cancelled create: %w", err)
	}
	return nil
}
