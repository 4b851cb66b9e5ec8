package host_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/internal/hosttest"
)

// TestReplayDoesNotWaitOutTheProvisioningDelay: with a provisioning delay
// inside the synchronous budget, a retry of a committed mutation under its
// Idempotency-Key replays the recorded answer at once, so a caller whose
// deadline is shorter than the delay still learns the outcome instead of
// being told its request wrote nothing. A new key still waits the delay
// out, and a caller that gives up during it is told that this request
// wrote nothing.
func TestReplayDoesNotWaitOutTheProvisioningDelay(t *testing.T) {
	const delay = 1500 * time.Millisecond
	h := hosttest.Start(t, hosttest.Options{ProvisioningDelay: delay, SyncBudget: 10 * time.Second})
	c, err := client.New(context.Background(), h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, c, "delayed")
	first := put(t, h, c, req, "key-delayed", "")
	if first.status != 201 {
		t.Fatalf("create: %d %s", first.status, first.body)
	}
	shortPut := func(key string) (rawAnswer, error) {
		ctx, cancel := context.WithTimeout(context.Background(), delay/3)
		defer cancel()
		return sendCtx(ctx, h, req, first.sent, key, "")
	}
	again, err := shortPut("key-delayed")
	if err != nil {
		t.Fatalf("a replay within a deadline of %v (the delay is %v): %v", delay/3, delay, err)
	}
	if again.status != 201 || !bytes.Equal(again.body, first.body) {
		t.Fatalf("replay: %d %s, want the recorded 201 byte for byte", again.status, again.body)
	}
	if _, err := shortPut("key-new"); err == nil {
		t.Fatal("a new key answered within a deadline shorter than the provisioning delay: the delay was not waited out")
	}
}
