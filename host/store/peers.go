package store

import "context"

// Peers is implemented by a Store that several host processes share
// (PostgreSQL, whose replicas serve one plane): a process announces on a
// channel that something changed, and every process listening on it —
// the announcer included — hears it, so a change committed through one
// replica reaches the others' data planes at once rather than at their
// next periodic reconcile (spec/runtime-v1.md §10.5; repo decision 0061).
// An announcement carries nothing and may be lost (a listener that was
// reconnecting): listeners still reconcile periodically.
type Peers interface {
	// Announce tells every listener of channel that something changed.
	Announce(ctx context.Context, channel string) error
	// Listen calls fn after each announcement on channel, and after each
	// (re)connection (an announcement may have been missed while it was
	// away), until ctx ends; it then returns ctx's error. A lost
	// connection is retried, waiting 1 s, doubling up to 30 s.
	Listen(ctx context.Context, channel string, fn func()) error
}
