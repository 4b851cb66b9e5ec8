package store

import (
	"context"
	"time"
)

// SQLPages is implemented by a Store that holds the bytes of every
// SQLiteDatabase itself, so that any replica on it can serve a database
// after its owner is gone (spec/runtime-v1.md §10.5; repo decision
// 0063). A database is its page count and its pages: page pgno (1-based)
// holds the file's bytes [(pgno-1)×SQLPageBytes, pgno×SQLPageBytes).
// One replica owns a database at a time, under the lease
// SQLDatabaseLease(uid); it runs the database from a local copy and
// commits the pages each SQLite transaction changed, under that lease's
// fence, before it answers. A database's pages, its row and its lease go
// with its resource (DeleteResource), in the same transaction.
type SQLPages interface {
	// CommitSQLPages stores pages (page number → SQLPageBytes bytes) of
	// database uid and sets its page count to count, deleting the pages
	// past it, in one transaction under fence (ErrFenced, and nothing
	// written, when fence's epoch is no longer the lease's).
	CommitSQLPages(ctx context.Context, fence Fence, uid string, count int64, pages map[int64][]byte) error
	// ReadSQLPages calls fn for each stored page of uid in page order and
	// returns the page count (0 for a database never written). A page
	// missing below the count is an error naming it.
	ReadSQLPages(ctx context.Context, uid string, fn func(pgno int64, data []byte) error) (int64, error)
	// PeerKey returns the store's key for authenticating requests between
	// the replicas sharing it (32 random bytes, made by the first replica
	// that asks, the same for every replica after).
	PeerKey(ctx context.Context) ([]byte, error)
}

// SQLPageBytes is the page size of every SQLiteDatabase file.
const SQLPageBytes = 4096

// SQLDatabaseLease names the lease under which one replica owns the
// SQLiteDatabase uid (repo decision 0063).
func SQLDatabaseLease(uid string) string { return "sql/" + uid }

// SQLOwnerLease is how long an owner's lease on a database runs without
// renewal: the longest a killed owner's databases wait before another
// replica takes them over (repo decision 0063).
const SQLOwnerLease = 10 * time.Second
