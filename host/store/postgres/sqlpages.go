package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// The SQLiteDatabase pages of store.SQLPages (migration
// 00017_sql_pages.sql; repo decision 0063). A commit is one transaction
// that first reads the owner's lease FOR SHARE (tx.fenced), so a takeover
// waits for it and a commit after a takeover is refused.

var _ store.SQLPages = (*Store)(nil)

const (
	pgSQLPagesUpsert = `INSERT INTO sql_pages (uid, pgno, data) SELECT $1, p.pgno, p.data FROM unnest($2::bigint[], $3::bytea[]) AS p(pgno, data)
		ON CONFLICT (uid, pgno) DO UPDATE SET data = excluded.data`
	pgSQLPagesTrim  = `DELETE FROM sql_pages WHERE uid = $1 AND pgno > $2`
	pgSQLDatabase   = `INSERT INTO sql_databases (uid, pages, commits, stored_at) VALUES ($1, $2, 1, $3) ON CONFLICT (uid) DO UPDATE SET pages = excluded.pages, commits = sql_databases.commits + 1, stored_at = excluded.stored_at`
	pgSQLPageCount  = `SELECT pages FROM sql_databases WHERE uid = $1`
	pgSQLPagesRead  = `SELECT pgno, data FROM sql_pages WHERE uid = $1 AND pgno <= $2 ORDER BY pgno`
	pgPeerKeyInsert = `INSERT INTO peer_keys (name, key, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`
	pgPeerKey       = `SELECT key FROM peer_keys WHERE name = $1`
	peerKeyName     = "replicas"
	// sqlPagesPerStatement is how many pages one upsert carries (1 MiB).
	sqlPagesPerStatement = 256
)

// CommitSQLPages stores a transaction's pages of database uid under fence.
func (s *Store) CommitSQLPages(ctx context.Context, fence store.Fence, uid string, count int64, pages map[int64][]byte) error {
	pgnos := make([]int64, 0, len(pages))
	for n, d := range pages {
		if n < 1 || n > count || len(d) != store.SQLPageBytes {
			return fmt.Errorf("commit SQL database %s: page %d of %d bytes is not one of its %d pages of %d bytes", uid, n, len(d), count, store.SQLPageBytes)
		}
		pgnos = append(pgnos, n)
	}
	slices.Sort(pgnos)
	return s.Update(ctx, func(stx store.Tx) error {
		t, ok := stx.(*tx)
		if !ok {
			return fmt.Errorf("commit SQL database %s: a %T is not this store's transaction", uid, stx)
		}
		if err := t.Fenced(fence); err != nil {
			return err
		}
		// In statements of sqlPagesPerStatement pages (1 MiB), so a large
		// transaction is never one message of its whole size.
		for batch := range slices.Chunk(pgnos, sqlPagesPerStatement) {
			datas := make([][]byte, len(batch))
			for i, n := range batch {
				datas[i] = pages[n]
			}
			if _, err := t.exec(pgSQLPagesUpsert, uid, batch, datas); err != nil {
				return fmt.Errorf("commit SQL database %s: %w", uid, err)
			}
		}
		if _, err := t.exec(pgSQLPagesTrim, uid, count); err != nil {
			return fmt.Errorf("commit SQL database %s: %w", uid, err)
		}
		if _, err := t.exec(pgSQLDatabase, uid, count, time.Now().UnixMilli()); err != nil {
			return fmt.Errorf("commit SQL database %s: %w", uid, err)
		}
		return nil
	})
}

// ReadSQLPages streams database uid's pages in page order, in one
// snapshot.
func (s *Store) ReadSQLPages(ctx context.Context, uid string, fn func(pgno int64, data []byte) error) (int64, error) {
	var count int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(ptx pgx.Tx) error {
		err := ptx.QueryRow(ctx, pgSQLPageCount, uid).Scan(&count)
		if errors.Is(err, pgx.ErrNoRows) {
			count = 0
			return nil
		}
		if err != nil {
			return classify(err)
		}
		rows, err := ptx.Query(ctx, pgSQLPagesRead, uid, count)
		if err != nil {
			return classify(err)
		}
		defer rows.Close()
		want := int64(1)
		for rows.Next() {
			var n int64
			var data []byte
			if err := rows.Scan(&n, &data); err != nil {
				return classify(err)
			}
			if n != want {
				return fmt.Errorf("SQL database %s has no page %d of its %d stored", uid, want, count)
			}
			if err := fn(n, data); err != nil {
				return err
			}
			want++
		}
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		if want != count+1 {
			return fmt.Errorf("SQL database %s has no page %d of its %d stored", uid, want, count)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read SQL database %s: %w", uid, err)
	}
	return count, nil
}

// PeerKey returns the replicas' shared key, making it on first use.
func (s *Store) PeerKey(ctx context.Context) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, pgPeerKeyInsert, peerKeyName, key, time.Now().UnixMilli()); err != nil {
		return nil, fmt.Errorf("make the replicas' peer key: %w", classify(err))
	}
	if err := s.pool.QueryRow(ctx, pgPeerKey, peerKeyName).Scan(&key); err != nil {
		return nil, fmt.Errorf("read the replicas' peer key: %w", classify(err))
	}
	return key, nil
}
