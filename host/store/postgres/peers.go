package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/host/store"
)

// store.Peers over PostgreSQL's NOTIFY and LISTEN (repo decision 0061):
// an announcement is pg_notify on the pool; a listener holds one
// connection of its own, outside the pools.

var _ store.Peers = (*Store)(nil)

// Announce sends an empty notification on channel.
func (s *Store) Announce(ctx context.Context, channel string) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, '')`, channel); err != nil {
		return fmt.Errorf("announce on %s: %w", channel, classify(err))
	}
	return nil
}

// Listen calls fn after each notification on channel and after each
// (re)connection, until ctx ends.
func (s *Store) Listen(ctx context.Context, channel string, fn func()) error {
	wait := time.Second
	for {
		// A failed connection is retried, and fn runs again once back.
		if s.listenOnce(ctx, channel, fn, func() { wait = time.Second }) != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return fmt.Errorf("listen on %s: %w", channel, ErrClosed)
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// listenOnce connects, listens and calls fn until the connection fails
// or ctx ends; connected runs once the LISTEN took.
func (s *Store) listenOnce(ctx context.Context, channel string, fn, connected func()) (err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer store.JoinCleanup(&err, func() error { return conn.Close(context.WithoutCancel(ctx)) })
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	fn()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		fn()
	}
}
