package provider

import (
	"context"
	"testing"
	"time"
)

// TestMutationContextOutlivesAStopForTheGrace: a stop (the request
// context cancelled) marks the mutation interrupted but does not cancel
// it; the grace does, and so does the call's end.
func TestMutationContextOutlivesAStopForTheGrace(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	ctx, done := graceContext(parent, time.Hour, time.Hour)
	if interrupted(ctx) {
		t.Fatal("interrupted before any stop")
	}
	stop()
	if !interrupted(ctx) {
		t.Fatal("a stop must mark the mutation interrupted")
	}
	if ctx.Err() != nil {
		t.Fatal("a stop must not cancel a mutation within its grace")
	}
	done()
	if ctx.Err() == nil {
		t.Fatal("the call's end must cancel its context")
	}

	parent, stop = context.WithCancel(context.Background())
	ctx, done = graceContext(parent, time.Hour, time.Millisecond)
	defer done()
	stop()
	<-ctx.Done() // the grace ends it
	if !interrupted(ctx) {
		t.Fatal("interrupted lost")
	}
}
