package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/takoform/takoform/host/store"
)

// The edge.objects bodies of store.ObjectBodies (migration
// 00015_object_chunks.sql; repo decision 0061): one statement per chunk,
// each its own transaction on the pool, so a body of any size never holds
// a connection or more than one chunk of memory.

var _ store.ObjectBodies = (*Store)(nil)

const (
	pgPutObjectChunk = `INSERT INTO object_chunks (bucket, name, seq, data, stored_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (bucket, name, seq) DO UPDATE SET data = excluded.data, stored_at = excluded.stored_at`
	pgObjectChunk      = `SELECT data FROM object_chunks WHERE bucket = $1 AND name = $2 AND seq = $3`
	pgDeleteObjectBody = `DELETE FROM object_chunks WHERE bucket = $1 AND name = $2`
	// A body nothing names whose newest chunk is older than $1.
	pgSweepObjectBodies = `WITH dead AS (
		SELECT c.bucket, c.name FROM object_chunks c GROUP BY c.bucket, c.name HAVING max(c.stored_at) < $1
		AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.bucket = c.bucket AND o.file = c.name)
		AND NOT EXISTS (SELECT 1 FROM object_parts p WHERE p.bucket = c.bucket AND p.file = c.name))
	DELETE FROM object_chunks c USING dead d WHERE c.bucket = d.bucket AND c.name = d.name RETURNING c.bucket, c.name`
)

// PutObjectChunk stores chunk seq of body name of bucket.
func (s *Store) PutObjectChunk(ctx context.Context, bucket, name string, seq int64, data []byte) error {
	if seq < 0 || len(data) == 0 || len(data) > store.ObjectChunkBytes {
		return fmt.Errorf("put chunk %d of body %s of bucket %s: a chunk is numbered from 0 and holds 1 to %d bytes, not %d",
			seq, name, bucket, store.ObjectChunkBytes, len(data))
	}
	if _, err := s.pool.Exec(ctx, pgPutObjectChunk, bucket, name, seq, data, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("put chunk %d of body %s of bucket %s: %w", seq, name, bucket, classify(err))
	}
	return nil
}

// ObjectChunk reads chunk seq of body name of bucket.
func (s *Store) ObjectChunk(ctx context.Context, bucket, name string, seq int64) ([]byte, error) {
	var data []byte
	if err := s.pool.QueryRow(ctx, pgObjectChunk, bucket, name, seq).Scan(&data); err != nil {
		return nil, notFound(classify(err), fmt.Sprintf("read chunk %d of body %s of bucket %s", seq, name, bucket))
	}
	return data, nil
}

// DeleteObjectBody deletes every chunk of body name of bucket.
func (s *Store) DeleteObjectBody(ctx context.Context, bucket, name string) error {
	if _, err := s.pool.Exec(ctx, pgDeleteObjectBody, bucket, name); err != nil {
		return fmt.Errorf("delete body %s of bucket %s: %w", name, bucket, classify(err))
	}
	return nil
}

// SweepObjectBodies deletes the bodies nothing names whose newest chunk
// was stored before before, and returns how many.
func (s *Store) SweepObjectBodies(ctx context.Context, before time.Time) (int, error) {
	rows, err := s.pool.Query(ctx, pgSweepObjectBodies, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("sweep object bodies: %w", classify(err))
	}
	defer rows.Close()
	bodies := map[[2]string]bool{}
	for rows.Next() {
		var b, n string
		if err := rows.Scan(&b, &n); err != nil {
			return 0, fmt.Errorf("sweep object bodies: %w", err)
		}
		bodies[[2]string{b, n}] = true
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sweep object bodies: %w", classify(err))
	}
	return len(bodies), nil
}
