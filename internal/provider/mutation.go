package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/takoform/takoform/client"
)

// StopGrace bounds how long a mutation already sent keeps waiting for its
// answer after OpenTofu stops the provider (SIGINT, StopProvider): the
// answer that arrives within it is recorded in state; one that does not
// is recorded as pending when the host accepted it (pending_operation_id),
// else reported as lost (spec/decisions/0006-idempotency-keys-per-mutation.md).
var StopGrace = 30 * time.Second

// stopKey carries, in a mutation context, the request context OpenTofu
// cancels on stop.
type stopKey struct{}

// errInterrupted: OpenTofu stopped the provider before this resource's
// mutation was sent; the resource was not changed on the host.
var errInterrupted = errors.New("the run was interrupted before this resource's change was sent to the host; the resource was not changed")

// mutationContext is the context of one logical mutation (one Create,
// Update or Delete call): a fresh idempotency-key scope that only this
// call's retries share (client.WithKeyScope), a deadline of limit, and no
// cancellation when OpenTofu stops the provider until StopGrace has passed
// after the stop. interrupted(ctx) reports the stop itself.
func mutationContext(parent context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	return graceContext(parent, limit, StopGrace)
}

// graceContext is mutationContext with the grace given.
func graceContext(parent context.Context, limit, grace time.Duration) (context.Context, context.CancelFunc) {
	base := context.WithValue(client.WithKeyScope(context.WithoutCancel(parent), client.NewKeyScope()), stopKey{}, parent)
	ctx, cancel := context.WithTimeout(base, limit)
	var mu sync.Mutex
	var timer *time.Timer
	stopWatch := context.AfterFunc(parent, func() {
		mu.Lock()
		timer = time.AfterFunc(grace, cancel)
		mu.Unlock()
	})
	return ctx, func() {
		stopWatch()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// interrupted reports whether OpenTofu stopped the provider during the
// mutation of ctx (mutationContext); a mutation not yet sent is then not
// sent.
func interrupted(ctx context.Context) bool {
	p, ok := ctx.Value(stopKey{}).(context.Context)
	return ok && p.Err() != nil
}

// interruptedError renders errInterrupted.
func interruptedError(summary string, id identity) diag.Diagnostics {
	return renderError(summary, errInterrupted, withCode(id, CodeInterrupted))
}

// claims records which resource of one provider configuration (one
// OpenTofu run) creates each host address: group/kind, space, name.
type claims struct{ m sync.Map }

// claim reports whether this call is the first of the run to create the
// address; a second claimant is refused (duplicateAddress) so two state
// entries never own one host object
// (spec/decisions/0006-idempotency-keys-per-mutation.md).
func (c *claims) claim(a client.Address) bool {
	_, taken := c.m.LoadOrStore(a.Ref.APIVersion+"\x00"+a.Ref.Kind+"\x00"+a.Space+"\x00"+a.Name, true)
	return !taken
}

// duplicateAddress is the refusal of a second resource of one
// configuration creating the address another one creates.
func (r *Resource) duplicateAddress(c *Codec, id identity) diag.Diagnostics {
	return renderError("Another resource of this configuration creates the same kind, space and name",
		fmt.Errorf("%s %q in space %q is already being created by another resource of this configuration; this one was not created and is bound to nothing",
			c.Ref.Kind, id.Name, id.Space), withCode(id, CodeDuplicateAddress))
}
