package postgres

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// exactBatchMax caps the exact reads one round trip carries.
const exactBatchMax = 64

// exactLoops is how many exact-read round trips a Store has in flight at
// once: twice the processors, at least 4, at most half the pool.
func exactLoops(maxConns int32) int {
	n := max(4, 2*runtime.GOMAXPROCS(0))
	return max(1, min(n, int(maxConns)/2))
}

// exactCall is one exact read waiting for a round trip: its key and
// FormRef in, its answer or error out once done is closed.
type exactCall struct {
	ctx context.Context
	k   store.Key
	ref form.FormRef
	res *store.Answer
	err error
	// answered: the batch read a row or none for it (exactRoundTrip)
	answered bool
	done     chan struct{}
}

// exactBatcher sends the exact reads that wait at one moment in one
// round trip: each of its loops takes the next waiting read and every
// other one waiting behind it, up to exactBatchMax
// (spec/decisions/0045-postgres-exact-read-batches.md).
type exactBatcher struct {
	queue chan *exactCall
	loops sync.WaitGroup
}

// startExactLoops starts the Store's exact-read loops; Close ends them.
func (s *Store) startExactLoops() {
	s.exact.queue = make(chan *exactCall, 4*exactBatchMax)
	for range exactLoops(s.opts.MaxConns) {
		s.exact.loops.Add(1)
		go s.exactLoop()
	}
}

// exactLoop runs round trips of waiting exact reads until the Store closes.
func (s *Store) exactLoop() {
	defer s.exact.loops.Done()
	batch := make([]*exactCall, 0, exactBatchMax)
	for {
		select {
		case <-s.closed:
			return
		case c := <-s.exact.queue:
			batch = append(batch[:0], c)
		}
	gather:
		for len(batch) < exactBatchMax {
			select {
			case c := <-s.exact.queue:
				batch = append(batch, c)
			default:
				break gather
			}
		}
		s.exactRoundTrip(batch)
		clear(batch)
	}
}

// exactBatched queues the exact read of k under ref for the next round
// trip and waits for its answer, the caller's context or Close.
func (s *Store) exactBatched(ctx context.Context, k store.Key, ref form.FormRef) (*store.Answer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &exactCall{ctx: ctx, k: k, ref: ref, done: make(chan struct{})}
	select {
	case s.exact.queue <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closed:
		return nil, ErrClosed
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closed:
		return nil, ErrClosed
	}
}

// exactRoundTrip answers batch: one read alone as exactAlone does; more in
// one pgx.Batch on one pooled connection, every SELECT its own statement
// sent after every read of the batch was asked for. A read the batch did
// not answer with a row or none (a lost connection, a statement aborted
// by an earlier one's failure), and every read of a round trip that did
// not end cleanly, is sent again alone (each in its own goroutine), which
// decides its error and its retry. The round trip's context ends once every caller's
// has.
func (s *Store) exactRoundTrip(batch []*exactCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.res, c.err = s.exactAlone(c.ctx, c.k, c.ref)
		close(c.done)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waiting atomic.Int32
	waiting.Store(int32(len(batch)))
	for _, c := range batch {
		stop := context.AfterFunc(c.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(batch))}
	for _, c := range batch {
		b.Queue(qExactAnswer, exactArgs(c.k, c.ref)...)
	}
	br := s.pool.SendBatch(ctx, b)
	for _, c := range batch {
		r, err := sqlrow.ScanExactAnswer(br.QueryRow(), c.k, c.ref)
		switch {
		case err == nil:
			c.res, c.answered = r, true
		case errors.Is(err, pgx.ErrNoRows):
			c.err, c.answered = notFound(err, sqlrow.ExactWhat(c.k, c.ref)), true
		}
	}
	if err := br.Close(); err != nil { // a round trip that did not end cleanly: none of its answers is kept
		for _, c := range batch {
			c.res, c.err, c.answered = nil, nil, false
		}
	}
	for _, c := range batch {
		if c.answered {
			close(c.done)
			continue
		}
		s.exact.loops.Add(1)
		go func() { // each on its own, so none waits out another's failure
			defer s.exact.loops.Done()
			c.res, c.err = s.exactAlone(c.ctx, c.k, c.ref)
			close(c.done)
		}()
	}
}

// exactArgs are qExactAnswer's arguments for k under ref.
func exactArgs(k store.Key, ref form.FormRef) []any {
	return []any{k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name, ref.APIVersion, ref.Kind, ref.DefinitionVersion, ref.SchemaDigest}
}
