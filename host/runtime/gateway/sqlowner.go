package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/takoform/takoform/host/runtime/sqlwal"
	"github.com/takoform/takoform/host/store"
)

// SQLiteDatabase bindings on a host whose replicas share one store
// (spec/runtime-v1.md §10.5; repo decision 0063). The store holds each
// database as pages (store.SQLPages). One replica owns a database at a
// time, under the lease store.SQLDatabaseLease(uid): it runs the calls on
// a local copy in WAL mode and, before answering, commits the pages each
// transaction changed to the store under the lease's fence. Another
// replica forwards its calls to the owner (sqlpeer.go); when the owner
// does not answer, it waits for the owner's lease to lapse, takes it, and
// rebuilds the database from the store's pages.

// SQLOwnership configures the gateway of one replica of a host whose
// store holds SQLite databases (WithSQLOwnership).
type SQLOwnership struct {
	// Holder is the base URL the other replicas reach this replica's peer
	// routes at (PeerHandler), "http(s)://HOST:PORT". A database's lease
	// names its owner by this URL and a token of this process, so two
	// processes given one URL by mistake never both own a database.
	Holder string
	// Dir is where this replica keeps its copies of the databases it owns
	// (created 0700); copies are rebuilt from the store, never trusted
	// across runs.
	Dir string
	// Client makes the calls forwarded to other replicas (nil: a client of
	// http.DefaultTransport's settings).
	Client *http.Client
	// Lease is how long an owner's lease runs unrenewed (0:
	// store.SQLOwnerLease).
	Lease time.Duration
}

// WithSQLOwnership serves SQLiteDatabase bindings on a store that holds
// their pages (store.SQLPages) with one owner replica per database; on
// another store it does nothing.
func WithSQLOwnership(o SQLOwnership) Option {
	return func(g *Gateway) {
		pages, ok := g.store.(store.SQLPages)
		if !ok {
			return
		}
		if o.Lease <= 0 {
			o.Lease = store.SQLOwnerLease
		}
		if o.Client == nil {
			o.Client = &http.Client{Transport: http.DefaultTransport}
		}
		token := make([]byte, 6)
		_, _ = rand.Read(token) // never fails (crypto/rand)
		g.sql.owner = &sqlOwner{g: g, pages: pages, holder: o.Holder + " " + hex.EncodeToString(token), dir: o.Dir, client: o.Client, ttl: o.Lease, seen: map[string]time.Time{}}
	}
}

type sqlOwner struct {
	g      *Gateway
	pages  store.SQLPages
	holder string // the peer URL, a space, this process's token
	dir    string
	client *http.Client
	ttl    time.Duration

	keyMu sync.Mutex
	key   []byte // store.SQLPages.PeerKey, read once

	seenMu sync.Mutex
	seen   map[string]time.Time // signatures accepted, until they expire (peerVerify)
}

// ownerMargin is how long before its lease's deadline an owner renews
// before serving: it bounds the clock skew between replicas a read from
// the copy tolerates (repo decision 0063).
func (o *sqlOwner) ownerMargin() time.Duration { return o.ttl * 3 / 10 }

// notOwner is another replica's lease on a database: the caller forwards
// to holder, or once expires has passed, takes the lease itself.
type notOwner struct {
	uid, holder string
	expires     time.Time
}

// peerURL is the URL part of a lease's holder.
func peerURL(holder string) string {
	u, _, _ := strings.Cut(holder, " ")
	return u
}

func (e *notOwner) Error() string {
	return fmt.Sprintf("database %s is owned by the replica at %s until %s", e.uid, e.holder, e.expires.Format(time.RFC3339Nano))
}

// hold makes this replica the owner of uid with a current copy, or
// returns *notOwner. The caller holds d.mu.
func (o *sqlOwner) hold(ctx context.Context, f *sqlFiles, uid string, d *sqlDB) error {
	now := time.Now()
	if d.other != nil && now.Before(d.other.expires) {
		return d.other
	}
	d.other = nil
	if d.db != nil && d.fence.Epoch != 0 {
		if now.Before(d.until.Add(-o.ownerMargin())) {
			return nil
		}
		var renewed bool
		if err := o.g.store.Update(ctx, func(tx store.Tx) (err error) {
			renewed, err = tx.RenewLease(o.holder, d.fence, now, o.ttl)
			return err
		}); err != nil {
			return unavailable(err)
		}
		if renewed {
			d.until = now.Add(o.ttl)
			return nil
		}
	}
	var l store.Lease
	if err := o.g.store.Update(ctx, func(tx store.Tx) (err error) {
		l, err = tx.AcquireLease(store.SQLDatabaseLease(uid), o.holder, now, o.ttl)
		return err
	}); err != nil {
		return unavailable(err)
	}
	if l.Holder != o.holder {
		o.discard(f, uid, d)
		d.other = &notOwner{uid: uid, holder: l.Holder, expires: l.Expires}
		return d.other
	}
	// The copy is current when no other epoch came between its own and
	// this one; otherwise it is rebuilt from the store's pages.
	if d.db == nil || d.fence.Epoch == 0 || l.Epoch != d.fence.Epoch+1 {
		if err := o.rebuild(ctx, f, uid, d); err != nil {
			o.discard(f, uid, d)
			return unavailable(fmt.Errorf("rebuild SQL database %s from the store: %w", uid, err))
		}
		o.g.log.Info("gateway: this replica owns a SQLite database now", "uid", uid, "epoch", l.Epoch)
	}
	d.fence, d.until = l.Fence(), now.Add(o.ttl)
	return nil
}

// rebuild replaces this replica's copy of uid with the store's pages.
func (o *sqlOwner) rebuild(ctx context.Context, f *sqlFiles, uid string, d *sqlDB) error {
	if d.db != nil {
		if err := d.db.Close(); err != nil {
			return err
		}
		d.db = nil
	}
	if err := ensureDir(f.dir()); err != nil {
		return err
	}
	path := f.path(uid)
	if err := removeFiles(path); err != nil {
		return err
	}
	tmp := path + ".rebuild"
	fh, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = o.pages.ReadSQLPages(ctx, uid, func(pgno int64, data []byte) error {
		_, err := fh.WriteAt(data, (pgno-1)*sqlPageSize)
		return err
	})
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return err
	}
	d.db, err = f.openFile(uid)
	return err
}

// shipTimeout bounds the commit of n changed pages: 30 s and 1 s more per
// MiB (256 pages). It does not follow the caller's context, so a caller
// that goes away does not leave the outcome unknown.
func shipTimeout(n int) time.Duration { return 30*time.Second + time.Duration(n/256)*time.Second }

// ship stores the pages the transactions on d's copy committed since the
// last ship, under d's fence, then empties the log. A failure is the
// call's answer: those transactions are not the database's, and the
// caller drops the copy.
func (o *sqlOwner) ship(uid string, d *sqlDB, e *engine, wal string) error {
	if st, err := os.Stat(wal); (err == nil && st.Size() == 0) || errors.Is(err, os.ErrNotExist) {
		return nil // nothing written since the last checkpoint (a read)
	}
	c, err := sqlwal.Read(wal, sqlPageSize)
	if err != nil {
		return unavailable(fmt.Errorf("read the log of SQL database %s: %w", uid, err))
	}
	if c.Frames > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), shipTimeout(len(c.Pages)))
		defer cancel()
		err := o.pages.CommitSQLPages(ctx, d.fence, uid, c.Count, c.Pages)
		if errors.Is(err, store.ErrFenced) {
			o.g.log.Warn("gateway: a SQLite database's write was refused: another replica took the database over", "uid", uid, "err", err)
			return errorf(http.StatusServiceUnavailable, "backend_unavailable",
				"another replica took this database over before this call's changes were stored; nothing of this call was applied; try again")
		}
		if err != nil {
			return unavailable(fmt.Errorf("store the pages of SQL database %s: %w", uid, err))
		}
	}
	// The log is not empty (checked above): empty it.
	if err := e.checkpointTruncate(); err != nil {
		return unavailable(fmt.Errorf("checkpoint SQL database %s: %w", uid, err))
	}
	return nil
}

// discard closes and deletes d's copy and forgets its fence (after a
// failed ship, or once another replica owns the database); the next call
// rebuilds it from the store or forwards. The caller
// holds d.mu.
func (o *sqlOwner) discard(f *sqlFiles, uid string, d *sqlDB) {
	if d.db != nil {
		if err := d.db.Close(); err != nil {
			o.g.log.Warn("gateway: closing a SQLite copy failed", "uid", uid, "err", err)
		}
		d.db = nil
	}
	d.fence, d.until = store.Fence{}, time.Time{}
	if err := removeFiles(f.path(uid)); err != nil {
		o.g.log.Warn("gateway: removing a SQLite copy failed", "uid", uid, "err", err)
	}
}

// release ends this replica's lease on uid (a clean stop), so another
// replica takes the database over at once. The caller holds d.mu.
func (o *sqlOwner) release(uid string, d *sqlDB) {
	if d.fence.Epoch == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.g.store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.ReleaseLease(o.holder, d.fence, time.Now())
		return err
	}); err != nil {
		o.g.log.Warn("gateway: releasing a SQLite database's lease failed; another replica takes it over when it lapses", "uid", uid, "err", err)
	}
	d.fence = store.Fence{}
}
