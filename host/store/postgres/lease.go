package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// Leases (store.Leases) of migration 00016_leases.sql. Acquiring and
// renewing lock the lease's row; a fenced write reads its epoch FOR
// SHARE, so a takeover waits for the writes of the epoch it ends to
// commit, and a write after it sees the new epoch and is refused.

const (
	pgLease          = `SELECT holder, epoch, expires_at FROM leases WHERE name = $1 FOR UPDATE`
	pgLeaseRead      = `SELECT holder, epoch, expires_at FROM leases WHERE name = $1`
	pgLeaseForFence  = `SELECT epoch FROM leases WHERE name = $1 FOR SHARE`
	pgLeaseInsert    = `INSERT INTO leases (name, holder, epoch, expires_at) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING`
	pgLeaseTakeover  = `UPDATE leases SET holder = $2, epoch = $3, expires_at = $4 WHERE name = $1`
	pgLeaseRenew     = `UPDATE leases SET expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3`
	pgLeaseRelease   = `UPDATE leases SET expires_at = least(expires_at, $4) WHERE name = $1 AND holder = $2 AND epoch = $3`
	leaseInsertTries = 2
)

// AcquireLease takes lease name for holder when absent, expired or its own.
func (t *tx) AcquireLease(name, holder string, now time.Time, ttl time.Duration) (store.Lease, error) {
	expires := time.UnixMilli(now.Add(ttl).UnixMilli()).UTC()
	for range leaseInsertTries {
		l, err := t.scanLease(pgLease, name)
		if errors.Is(err, store.ErrNotFound) {
			tag, err := t.exec(pgLeaseInsert, name, holder, int64(1), expires.UnixMilli())
			if err != nil {
				return l, fmt.Errorf("acquire lease %s: %w", name, err)
			}
			if tag.RowsAffected() == 1 {
				return store.Lease{Name: name, Holder: holder, Epoch: 1, Expires: expires}, nil
			}
			continue // another host inserted it first: read its row
		}
		if err != nil {
			return l, err
		}
		if l.Holder != holder && now.Before(l.Expires) {
			return l, nil
		}
		l.Holder, l.Epoch, l.Expires = holder, l.Epoch+1, expires
		if _, err := t.exec(pgLeaseTakeover, name, holder, l.Epoch, expires.UnixMilli()); err != nil {
			return l, fmt.Errorf("acquire lease %s: %w", name, err)
		}
		return l, nil
	}
	return store.Lease{}, fmt.Errorf("acquire lease %s: its row was neither insertable nor readable", name)
}

// RenewLease extends holder's current epoch.
func (t *tx) RenewLease(holder string, f store.Fence, now time.Time, ttl time.Duration) (bool, error) {
	tag, err := t.exec(pgLeaseRenew, f.Lease, holder, f.Epoch, now.Add(ttl).UnixMilli())
	if err != nil {
		return false, fmt.Errorf("renew lease %s: %w", f.Lease, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease ends holder's epoch at now.
func (t *tx) ReleaseLease(holder string, f store.Fence, now time.Time) (bool, error) {
	tag, err := t.exec(pgLeaseRelease, f.Lease, holder, f.Epoch, now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("release lease %s: %w", f.Lease, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Lease reads one lease.
func (t *tx) Lease(name string) (store.Lease, error) { return t.scanLease(pgLeaseRead, name) }

func (t *tx) scanLease(q, name string) (store.Lease, error) {
	l := store.Lease{Name: name}
	var expires int64
	if err := t.queryRow(q, name).Scan(&l.Holder, &l.Epoch, &expires); err != nil {
		return l, notFound(err, "lease "+name)
	}
	l.Expires = time.UnixMilli(expires).UTC()
	return l, nil
}

// fenced is nil when f is the zero Fence or its lease's current epoch,
// else ErrFenced; it holds the lease's row shared until the transaction
// ends.
func (t *tx) fenced(f store.Fence) error {
	if f == (store.Fence{}) {
		return nil
	}
	var epoch int64
	err := t.queryRow(pgLeaseForFence, f.Lease).Scan(&epoch)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("write under lease %s epoch %d: the lease was never acquired: %w", f.Lease, f.Epoch, store.ErrFenced)
	case err != nil:
		return fmt.Errorf("read lease %s: %w", f.Lease, err)
	case epoch != f.Epoch:
		return fmt.Errorf("write under lease %s epoch %d: epoch %d holds it now: %w", f.Lease, f.Epoch, epoch, store.ErrFenced)
	}
	return nil
}
