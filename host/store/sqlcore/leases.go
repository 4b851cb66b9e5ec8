package sqlcore

import (
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// Leases (store.Leases; spec/runtime-v1.md §10.5, repo decision 0062).
// Acquiring reads the lease's row locked (Executor.ReadLocked) and
// either inserts it or takes it over; a fenced write reads its epoch
// (FOR SHARE on PostgreSQL), so a takeover waits for the writes of the
// epoch it ends to commit, and a write after it sees the new epoch and is
// refused. On SQLite the one writer serializes every Update.

// leaseInsertTries bounds AcquireLease's reads: an insert that lost to a
// concurrent one reads the row it inserted.
const leaseInsertTries = 2

// AcquireLease takes lease name for holder when absent, expired or its own.
func (c Core) AcquireLease(name, holder string, now time.Time, ttl time.Duration) (store.Lease, error) {
	expires := time.UnixMilli(now.Add(ttl).UnixMilli()).UTC()
	for range leaseInsertTries {
		l, err := scanLease(c.X.ReadLocked(Lock{}, Lease, bind(name)), name)
		if NoRows(err) {
			n, err := c.X.Exec(LeaseInsert, bind(name, holder, int64(1), expires.UnixMilli()))
			if err != nil {
				return l, fmt.Errorf("acquire lease %s: %w", name, err)
			}
			if n == 1 {
				return store.Lease{Name: name, Holder: holder, Epoch: 1, Expires: expires}, nil
			}
			continue // another host inserted it first: read its row
		}
		if err != nil {
			return l, NotFound(err, "lease "+name)
		}
		if l.Holder != holder && now.Before(l.Expires) {
			return l, nil
		}
		l.Holder, l.Epoch, l.Expires = holder, l.Epoch+1, expires
		if _, err := c.X.Exec(LeaseTakeover, bind(name, holder, l.Epoch, expires.UnixMilli())); err != nil {
			return l, fmt.Errorf("acquire lease %s: %w", name, err)
		}
		return l, nil
	}
	return store.Lease{}, fmt.Errorf("acquire lease %s: its row was neither insertable nor readable", name)
}

// RenewLease extends holder's current epoch.
func (c Core) RenewLease(holder string, f store.Fence, now time.Time, ttl time.Duration) (bool, error) {
	n, err := c.X.Exec(LeaseRenew, bind(f.Lease, holder, f.Epoch, now.Add(ttl).UnixMilli()))
	if err != nil {
		return false, fmt.Errorf("renew lease %s: %w", f.Lease, err)
	}
	return n == 1, nil
}

// ReleaseLease ends holder's epoch at now.
func (c Core) ReleaseLease(holder string, f store.Fence, now time.Time) (bool, error) {
	n, err := c.X.Exec(LeaseRelease, bind(f.Lease, holder, f.Epoch, now.UnixMilli()))
	if err != nil {
		return false, fmt.Errorf("release lease %s: %w", f.Lease, err)
	}
	return n == 1, nil
}

// Lease reads one lease.
func (c Core) Lease(name string) (store.Lease, error) {
	l, err := scanLease(c.X.QueryRow(Lease, bind(name)), name)
	if err != nil {
		return l, NotFound(err, "lease "+name)
	}
	return l, nil
}

func scanLease(row sqlrow.Scanner, name string) (store.Lease, error) {
	l := store.Lease{Name: name}
	var expires int64
	if err := row.Scan(&l.Holder, &l.Epoch, &expires); err != nil {
		return l, err
	}
	l.Expires = time.UnixMilli(expires).UTC()
	return l, nil
}

// Fenced is nil when f is the zero Fence or its lease's current epoch,
// else an error wrapping store.ErrFenced; on PostgreSQL it holds the
// lease's row shared until the transaction ends.
func (c Core) Fenced(f store.Fence) error {
	if f == (store.Fence{}) {
		return nil
	}
	var epoch int64
	err := c.X.QueryRow(LeaseForFence, bind(f.Lease)).Scan(&epoch)
	switch {
	case NoRows(err):
		return fmt.Errorf("write under lease %s epoch %d: the lease was never acquired: %w", f.Lease, f.Epoch, store.ErrFenced)
	case err != nil:
		return fmt.Errorf("read lease %s: %w", f.Lease, err)
	case epoch != f.Epoch:
		return fmt.Errorf("write under lease %s epoch %d: epoch %d holds it now: %w", f.Lease, f.Epoch, epoch, store.ErrFenced)
	}
	return nil
}

// --- Sealed sensitive values (store.Secrets, spec/runtime-v1.md §3.2) ---

// SecretPut stores s, replacing any row at its (worker, name).
func (c Core) SecretPut(s *store.Secret) error {
	sealed := s.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	if _, err := c.X.Exec(SecretPut, bind(s.Worker, s.Name, s.Tenant, s.Space, sealed, s.KeyID, s.UpdatedAt.UnixMilli())); err != nil {
		return fmt.Errorf("put secret %s of worker %s: %w", s.Name, s.Worker, err)
	}
	return nil
}

// SecretDelete deletes the row at (worker, name), reporting whether one was there.
func (c Core) SecretDelete(worker, name string) (bool, error) {
	n, err := c.X.Exec(SecretDelete, bind(worker, name))
	if err != nil {
		return false, fmt.Errorf("delete secret %s of worker %s: %w", name, worker, err)
	}
	return n > 0, nil
}

// SecretsOf lists worker's rows by name.
func (c Core) SecretsOf(worker string) ([]*store.Secret, error) {
	return c.secrets("list secrets of worker "+worker, SecretsOf, worker)
}

// SecretsAfter lists up to limit rows after (worker, name).
func (c Core) SecretsAfter(worker, name string, limit int) ([]*store.Secret, error) {
	return c.secrets("list secrets", SecretsAfter, worker, name, limit)
}

func (c Core) secrets(what string, s Stmt, args ...any) ([]*store.Secret, error) {
	out := []*store.Secret{}
	err := c.X.Query(s, func(row sqlrow.Scanner) error {
		s := &store.Secret{}
		var ms int64
		if err := row.Scan(&s.Worker, &s.Name, &s.Tenant, &s.Space, &s.Sealed, &s.KeyID, &ms); err != nil {
			return err
		}
		s.UpdatedAt = time.UnixMilli(ms).UTC()
		out = append(out, s)
		return nil
	}, bind(args...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
