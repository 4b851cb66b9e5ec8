package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

// A store shared by several processes (store.Peers): a listener hears
// once it is connected, then each announcement on its channel and none on
// another channel, and returns the context's error when it ends.
func testPeers(t *testing.T, s store.Store) {
	p, ok := s.(store.Peers)
	if !ok {
		t.Skip("this store is not shared by several processes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() { done <- p.Listen(ctx, "takoform_storetest", func() { heard <- struct{}{} }) }()
	hear := func(what string) {
		t.Helper()
		select {
		case <-heard:
		case <-time.After(30 * time.Second):
			t.Fatalf("the listener did not hear %s", what)
		}
	}
	hear("its connection")
	wantNoErr(t, "Announce on another channel", p.Announce(ctx, "takoform_storetest_other"))
	wantNoErr(t, "Announce", p.Announce(ctx, "takoform_storetest"))
	hear("the announcement")
	select {
	case <-heard:
		t.Error("the listener heard an announcement on another channel, or one twice")
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Listen returned %v after its context ended; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Listen did not return after its context ended")
	}
}
