package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

var _ store.ExactReader = (*Store)(nil)

// qExactAnswer is the exact read: the FormRef in the WHERE clause, the
// stored answer selected (spec/decisions/0046-stored-answer.md).
const qExactAnswer = `SELECT ` + sqlrow.ExactAnswerCols + ` FROM resources
	WHERE tenant = $1 AND space = $2 AND api_version = $3 AND kind = $4 AND name = $5
	AND form_api_version = $6 AND form_kind = $7 AND form_definition_version = $8 AND form_schema_digest = $9`

// ExactAnswer implements store.ExactReader: one SELECT outside any
// transaction, its own snapshot taken after the call began; the reads
// waiting at one moment share one round trip (exactBatched,
// spec/decisions/0045-postgres-exact-read-batches.md; PERFORMANCE.md, log
// entry "The exact read on PostgreSQL: one statement, no View machinery"). It returns an
// error wrapping store.ErrNotFound when k holds no resource or one under
// another FormRef, ErrClosed on a closed Store, the context's error when
// ctx ends first, and one wrapping store.ErrUnavailable for a lost or
// refused connection.
func (s *Store) ExactAnswer(ctx context.Context, k store.Key, ref form.FormRef) (*store.Answer, error) {
	select {
	case <-s.closed:
		return nil, ErrClosed
	default:
	}
	return s.exactBatched(ctx, k, ref)
}

// exactAlone is one exact read in a round trip of its own, on a pooled
// connection; a pooled connection found dead is replaced and the read
// sent again (it wrote nothing), up to Options.MaxConns times.
func (s *Store) exactAlone(ctx context.Context, k store.Key, ref form.FormRef) (*store.Answer, error) {
	for attempt := 0; ; attempt++ {
		select {
		case <-s.closed:
			return nil, ErrClosed
		default:
		}
		r, err := sqlrow.ScanExactAnswer(s.pool.QueryRow(ctx, qExactAnswer, exactArgs(k, ref)...), k, ref)
		var dial *pgconn.ConnectError
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, pgx.ErrNoRows):
			return nil, notFound(err, sqlrow.ExactWhat(k, ref))
		case attempt < int(s.opts.MaxConns) && isUnavailable(err) && !errors.As(err, &dial) && ctx.Err() == nil:
			continue // a stale pooled connection (noteFirst): another one
		}
		return nil, fmt.Errorf("%s on %s: %w", sqlrow.ExactWhat(k, ref), s.url, classify(err))
	}
}
