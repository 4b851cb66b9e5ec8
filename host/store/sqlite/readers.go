package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// A reader is one read-only connection of the View pool, held out of
// database/sql's pool, with every statement prepared on it. A View on a
// reader runs BEGIN, its statements and ROLLBACK as prepared statements
// under Background: no *sql.Tx, whose watcher goroutines (one per
// transaction and one per result set) and per-transaction statement
// rebinding made half of an exact read's cost (repo decision 0022). The caller's
// context is checked before each statement (tx.usable).
type reader struct {
	conn  *sql.Conn
	stmts *statements
	exact *rawStmt // qExactAnswer on the driver connection (ExactAnswer)
}

// readers is the View pool: a slot per allowed connection, nil until a
// View first needs it, and every open reader so Close can end them.
type readers struct {
	db    *sql.DB
	slots chan *reader
	mu    sync.Mutex
	open  map[*reader]bool
}

func newReaders(db *sql.DB, n int) *readers {
	p := &readers{db: db, slots: make(chan *reader, n), open: map[*reader]bool{}}
	for range n {
		p.slots <- nil
	}
	return p
}

// take waits for a free slot and returns its reader, opening one for an
// empty slot.
func (p *readers) take(ctx context.Context, closing <-chan struct{}) (*reader, error) {
	var rd *reader
	select {
	case rd = <-p.slots:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-closing:
		return nil, ErrClosed
	}
	if rd != nil {
		return rd, nil
	}
	rd, err := p.dial(ctx)
	if err != nil {
		p.slots <- nil
		return nil, err
	}
	return rd, nil
}

func (p *readers) dial(ctx context.Context) (*reader, error) {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open read connection: %w", err)
	}
	st, err := prepare(ctx, conn)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("prepare read statements: %w", err), conn.Close())
	}
	exact, err := prepareRaw(ctx, conn, queries[qExactAnswer])
	if err != nil {
		return nil, errors.Join(fmt.Errorf("prepare the exact read: %w", err), st.close(), conn.Close())
	}
	rd := &reader{conn: conn, stmts: st, exact: exact}
	p.mu.Lock()
	p.open[rd] = true
	p.mu.Unlock()
	return rd, nil
}

// give returns a reader to the pool; a broken one is closed and its slot
// left empty, to be opened again. The error is that close's.
func (p *readers) give(rd *reader, broken bool) error {
	var err error
	if broken {
		err = p.end(rd, true)
		rd = nil
	}
	p.slots <- rd
	return err
}

// end closes a reader. A broken one (a failed BEGIN or ROLLBACK may leave
// it inside a transaction) is closed for good, never pooled again.
func (p *readers) end(rd *reader, broken bool) error {
	p.mu.Lock()
	delete(p.open, rd)
	p.mu.Unlock()
	err := errors.Join(rd.stmts.close(), rd.exact.close(rd.conn))
	if broken {
		// ErrBadConn is how database/sql is told to discard the connection:
		// Raw returns it by design.
		if rerr := rd.conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(rerr, driver.ErrBadConn) {
			err = errors.Join(err, rerr)
		}
	}
	return errors.Join(err, rd.conn.Close())
}

// close waits until every reader in use is given back, holding every
// slot so no take succeeds after it (a waiting take ends with ErrClosed,
// the store's closing channel being closed first), then ends every open
// reader. A read in flight when the store closes finishes on its reader.
func (p *readers) close() error {
	for range cap(p.slots) {
		<-p.slots
	}
	p.mu.Lock()
	open := make([]*reader, 0, len(p.open))
	for rd := range p.open {
		open = append(open, rd)
	}
	p.mu.Unlock()
	var errs []error
	for _, rd := range open {
		errs = append(errs, p.end(rd, false))
	}
	return errors.Join(errs...)
}

// View runs fn in a read-only transaction on the last committed snapshot;
// fn's error is returned as is. Writes inside fn fail. fn runs on the
// caller's goroutine.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) (err error) {
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	rd, err := s.readers.take(ctx, s.closing)
	if err != nil {
		return err
	}
	bg := context.Background()
	if _, err := rd.stmts[qBegin].ExecContext(bg); err != nil {
		return errors.Join(fmt.Errorf("begin read transaction: %w", err), s.readers.give(rd, true))
	}
	t := &tx{ctx: bg, user: ctx, sqlc: rd.conn, db: rd.stmts}
	t.Core.X = t
	defer func() { // also when fn panics, so the reader returns to the pool
		t.done = true
		_, rerr := rd.stmts[qRollback].ExecContext(bg)
		if rerr != nil {
			rerr = fmt.Errorf("end read transaction: %w", rerr)
		}
		store.JoinCleanup(&err, func() error { return errors.Join(rerr, s.readers.give(rd, rerr != nil)) })
	}()
	return fn(t)
}

var _ store.ExactReader = (*Store)(nil)

// ExactAnswer implements store.ExactReader: one SELECT in autocommit
// mode on a reader, its own snapshot, with no BEGIN and ROLLBACK around
// it (decision spec/decisions/0022-exact-read-path.md), the stored answer
// selected (spec/decisions/0046-stored-answer.md). A FormRef whose
// group or kind is not the key's, which no Host API request names (the
// exact query's must be the path's), is read through View instead
// (PERFORMANCE.md, log entry "The host's CPU per exact read").
func (s *Store) ExactAnswer(ctx context.Context, k store.Key, ref form.FormRef) (*store.Answer, error) {
	if ref.APIVersion != k.APIVersion || ref.Kind != k.Kind {
		return store.ExactAnswerByView(ctx, s, k, ref)
	}
	select {
	case <-s.closing:
		return nil, ErrClosed
	default:
	}
	rd, err := s.readers.take(ctx, s.closing)
	if err != nil {
		return nil, err
	}
	row, err := rd.exact.queryRow(rd.conn, k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name, ref.DefinitionVersion, ref.SchemaDigest)
	var a *store.Answer
	if err == nil {
		a, err = sqlrow.ScanExactAnswer(row, k, ref)
		clear(row) // the reader holds no resource's bytes while it waits
	}
	if gerr := s.readers.give(rd, false); gerr != nil { // never for a reader given back whole
		return nil, gerr
	}
	if err != nil {
		return nil, notFound(err, sqlrow.ExactWhat(k, ref))
	}
	return a, nil
}
