package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/host/store"
)

// A request is one queued Update. Its state moves once, from queued to
// taken (the writer will run it and answer) or to cancelled (the caller
// gave up while it was queued, and the writer skips it).
type request struct {
	fn    func(store.Tx) error
	state atomic.Int32
	err   error
	done  chan struct{}
}

const (
	queued int32 = iota
	taken
	cancelled
)

// Update queues fn for the writer and waits for its answer: nil once fn's
// writes are committed and fsynced, fn's own error (nothing of fn's
// written), an error describing a panic in fn, or a storage error (nothing
// of fn's written). ctx is honoured while the request is queued; once the
// writer has taken it, Update waits for the commit so its answer is exact.
// fn runs on the writer goroutine, after the functions queued before it in
// its batch: it must be short and must not block, call the Store, or call
// runtime.Goexit (t.FailNow), which would stop the writer.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{fn: fn, done: make(chan struct{})}
	select {
	case <-s.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	case s.queue <- r:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, cancelled) {
			return ctx.Err()
		}
	case <-s.stopped:
		if r.state.CompareAndSwap(queued, cancelled) {
			return ErrClosed
		}
	}
	<-r.done // taken: the writer answers before it stops
	return r.err
}

// writer is the one goroutine that writes: it takes what is queued (up to
// MaxBatch), commits it as one transaction, and repeats until Close.
func (s *Store) writer() {
	defer close(s.stopped)
	batch := make([]*request, 0, s.opts.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case <-s.closing:
			return
		case r := <-s.queue:
			batch = s.take(batch, r)
		}
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r := <-s.queue:
				batch = s.take(batch, r)
			default:
				break drain
			}
		}
		if len(batch) > 0 {
			s.commit(batch)
		}
	}
}

func (s *Store) take(batch []*request, r *request) []*request {
	if r.state.CompareAndSwap(queued, taken) {
		batch = append(batch, r)
	}
	return batch
}

// commit runs the batch's functions in one transaction, commits once and
// answers each caller. It first runs them one after another with no
// savepoints (commitDirect); only when one of them fails does it roll that
// back and run the batch again with a savepoint per function, so a failing
// function never undoes its neighbours (decision
// spec/decisions/0023-savepoints-on-failure.md). A function may therefore
// run twice, which the Store contract allows (store.Store).
func (s *Store) commit(batch []*request) {
	// Statements run under Background, never a caller's context: an
	// interrupted statement can roll back the whole batch's transaction.
	ctx := context.Background()
	if o := s.observe.Load(); o != nil {
		defer func(start time.Time) { (*o).ObserveCommit(time.Since(start), len(batch)) }(time.Now())
	}
	if s.commitDirect(ctx, batch) {
		return
	}
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		answerAll(batch, fmt.Errorf("begin write transaction: %w", err))
		return
	}
	t := newTx(ctx, sqlTx, s.wstmts)
	for i, r := range batch {
		var fatal error
		r.err, fatal = runSavepoint(ctx, t, r.fn)
		if fatal != nil {
			store.JoinCleanup(&fatal, sqlTx.Rollback)
			for _, r := range batch[:i] {
				if r.err == nil {
					r.err = fatal
				}
			}
			answerAll(batch[i:], fatal)
			answer(batch[:i])
			return
		}
	}
	if err := sqlTx.Commit(); err != nil {
		err = fmt.Errorf("commit write transaction: %w", err)
		for _, r := range batch {
			if r.err == nil {
				r.err = err
			}
		}
	}
	answer(batch)
}

// commitDirect runs every function of the batch in one transaction with
// no savepoints and commits. It reports false, having rolled everything
// back and answered no one, when a function failed in a batch of more than
// one; a lone function's failure is its caller's answer as it stands.
func (s *Store) commitDirect(ctx context.Context, batch []*request) bool {
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return false // the savepoint path reports it
	}
	t := newTx(ctx, sqlTx, s.wstmts)
	for _, r := range batch {
		t.done = false
		r.err = call(r.fn, t)
		t.done = true
		if r.err != nil {
			if err := sqlTx.Rollback(); err != nil { // nothing committed, and no second run on this transaction
				rb := fmt.Errorf("roll back write transaction: %w", err)
				for _, q := range batch {
					q.err = errors.Join(q.err, rb)
				}
				answer(batch)
				return true
			}
			if len(batch) == 1 {
				answer(batch)
				return true
			}
			for _, r := range batch {
				r.err = nil
			}
			return false
		}
	}
	if err := sqlTx.Commit(); err != nil {
		answerAll(batch, fmt.Errorf("commit write transaction: %w", err))
		return true
	}
	answer(batch)
	return true
}

// runSavepoint runs fn between SAVEPOINT and RELEASE, rolling back to the
// savepoint when fn fails or panics. ferr is fn's outcome for its caller;
// fatal is a failure of the transaction itself, which ends the batch.
func runSavepoint(ctx context.Context, t *tx, fn func(store.Tx) error) (ferr, fatal error) {
	if _, err := t.stmt(qSavepoint).ExecContext(ctx); err != nil {
		return nil, fmt.Errorf("open savepoint: %w", err)
	}
	t.done = false
	ferr = call(fn, t)
	t.done = true
	if ferr != nil {
		if _, err := t.stmt(qRollbackToSavepoint).ExecContext(ctx); err != nil {
			return ferr, fmt.Errorf("roll back savepoint after %v: %w", ferr, err)
		}
	}
	if _, err := t.stmt(qReleaseSavepoint).ExecContext(ctx); err != nil {
		return ferr, fmt.Errorf("release savepoint: %w", err)
	}
	return ferr, nil
}

// errPanic marks the error an Update returns when its function panicked.
var errPanic = errors.New("update function panicked")

func call(fn func(store.Tx) error, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
	}()
	return fn(t)
}

func answerAll(batch []*request, err error) {
	for _, r := range batch {
		r.err = err
	}
	answer(batch)
}

func answer(batch []*request) {
	for _, r := range batch {
		close(r.done)
	}
}
