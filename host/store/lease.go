package store

import (
	"fmt"
	"time"
)

// Leases held in the store (spec/runtime-v1.md §10.5; repo decision
// 0062): a named lease is held by one holder at a time until its
// deadline, renewed by that holder, and taken over after the deadline
// with the next epoch. The epoch fences writes: a write made under a
// Fence whose epoch is no longer the lease's current one is refused with
// ErrFenced, so a holder that lost its lease (paused, partitioned)
// changes nothing.

// EventsLease names the lease the events dispatcher runs under.
const EventsLease = "events"

// ErrFenced is a write refused because its Fence's epoch is not the
// lease's current one (or the lease was never acquired). It wraps
// ErrConflict.
var ErrFenced = fmt.Errorf("%w: the lease epoch is no longer current", ErrConflict)

// Lease is one named lease as stored.
type Lease struct {
	Name    string
	Holder  string    // who holds (or last held) it
	Epoch   int64     // 1 at the first acquisition, +1 at each takeover
	Expires time.Time // the deadline, to the millisecond; held while now is before it
}

// Fence is the lease epoch a write is made under. The zero Fence is no
// fence: the write is not checked (a store's own tools and tests; the
// events dispatcher always writes under its lease's).
type Fence struct {
	Lease string
	Epoch int64
}

// Fence is the fence of l's current epoch.
func (l Lease) Fence() Fence { return Fence{Lease: l.Name, Epoch: l.Epoch} }

// Leases is the part of Tx holding leases.
type Leases interface {
	// AcquireLease takes lease name for holder until now+ttl and returns
	// the lease as it stands: a new epoch (the previous + 1, 1 for the
	// first) when the lease is absent, expired at now, or last held by
	// holder itself (its earlier run); otherwise the lease unchanged,
	// another holder's.
	AcquireLease(name, holder string, now time.Time, ttl time.Duration) (Lease, error)
	// RenewLease moves the deadline of lease fence.Lease to now+ttl if
	// holder holds its epoch fence.Epoch, and reports whether it did. A
	// deadline passed with no takeover is renewed too: nobody else acted
	// under a later epoch.
	RenewLease(holder string, fence Fence, now time.Time, ttl time.Duration) (bool, error)
	// ReleaseLease ends holder's epoch fence.Epoch at now (the next
	// acquisition takes over at once), and reports whether holder held it.
	ReleaseLease(holder string, fence Fence, now time.Time) (bool, error)
	// Lease reads lease name; ErrNotFound when never acquired.
	Lease(name string) (Lease, error)
}
