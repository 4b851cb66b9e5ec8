package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
)

// Leases (store.Leases) of migration 00012_leases.sql. The one writer
// serializes every Update, so a fence read in a write transaction holds
// until it commits.

// AcquireLease takes lease name for holder when absent, expired or its own.
func (t *tx) AcquireLease(name, holder string, now time.Time, ttl time.Duration) (store.Lease, error) {
	l, err := t.Lease(name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		l = store.Lease{Name: name}
	case err != nil:
		return l, err
	case l.Holder != holder && now.Before(l.Expires):
		return l, nil
	}
	l.Holder, l.Epoch, l.Expires = holder, l.Epoch+1, time.UnixMilli(now.Add(ttl).UnixMilli()).UTC()
	if _, err := t.exec(qLeasePut, name, holder, l.Epoch, l.Expires.UnixMilli()); err != nil {
		return l, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return l, nil
}

// RenewLease extends holder's current epoch.
func (t *tx) RenewLease(holder string, f store.Fence, now time.Time, ttl time.Duration) (bool, error) {
	res, err := t.exec(qLeaseRenew, f.Lease, holder, f.Epoch, now.Add(ttl).UnixMilli())
	if err != nil {
		return false, fmt.Errorf("renew lease %s: %w", f.Lease, err)
	}
	n, err := affected(res)
	return n == 1, err
}

// ReleaseLease ends holder's epoch at now.
func (t *tx) ReleaseLease(holder string, f store.Fence, now time.Time) (bool, error) {
	res, err := t.exec(qLeaseRelease, f.Lease, holder, f.Epoch, now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("release lease %s: %w", f.Lease, err)
	}
	n, err := affected(res)
	return n == 1, err
}

// Lease reads one lease.
func (t *tx) Lease(name string) (store.Lease, error) {
	l := store.Lease{Name: name}
	var expires int64
	if err := t.queryRow(qLease, name).Scan(&l.Holder, &l.Epoch, &expires); err != nil {
		return l, notFound(err, "lease "+name)
	}
	l.Expires = time.UnixMilli(expires).UTC()
	return l, nil
}

// fenced is nil when f is the zero Fence or its lease's current epoch,
// else ErrFenced.
func (t *tx) fenced(f store.Fence) error {
	if f == (store.Fence{}) {
		return nil
	}
	var epoch int64
	err := t.queryRow(qLeaseForFence, f.Lease).Scan(&epoch)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("write under lease %s epoch %d: the lease was never acquired: %w", f.Lease, f.Epoch, store.ErrFenced)
	case err != nil:
		return fmt.Errorf("read lease %s: %w", f.Lease, err)
	case epoch != f.Epoch:
		return fmt.Errorf("write under lease %s epoch %d: epoch %d holds it now: %w", f.Lease, f.Epoch, epoch, store.ErrFenced)
	}
	return nil
}
