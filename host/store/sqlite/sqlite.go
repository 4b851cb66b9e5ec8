// Package sqlite is the host's embedded store: one SQLite file (driver
// modernc.org/sqlite, pure Go) implementing store.Store (ARCHITECTURE.md
// §5). The file is created on first start and migrated with goose
// from the versioned SQL files in migrations/; a file written by a newer
// binary is refused with store.ErrTooNew.
//
// Durability: WAL journal, synchronous=FULL, so Update returns nil only
// after its transaction is fsynced (acknowledged means durable).
//
// Concurrency (decision spec/decisions/0001-group-commit.md): Update calls
// are queued to one writer goroutine, which runs up to Options.MaxBatch
// queued functions in one BEGIN IMMEDIATE transaction and commits once: one
// fsync answers the whole batch. A function's error (or panic) reaches
// only its caller and undoes only its own writes: a batch in which one
// fails is rolled back and run again with each function inside its own
// SAVEPOINT (decision spec/decisions/0023-savepoints-on-failure.md), so a
// function may run twice. A failed COMMIT reaches every caller of the
// batch. Update functions run on the writer goroutine, one at a time, and
// must not call the Store. View runs on held read-only connections that
// read the last committed snapshot concurrently with the writer (decision
// spec/decisions/0022-exact-read-path.md).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/takoform/takoform/host/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrClosed is returned by Update and View on a closed Store.
var ErrClosed = errors.New("sqlite store is closed")

// Options tune a Store; the zero value selects every default.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock held by another
	// connection or process before failing with SQLITE_BUSY. Default 5s.
	BusyTimeout time.Duration
	// MaxBatch caps how many queued Update functions share one
	// transaction and one fsync. Default 128; 1 disables group commit.
	MaxBatch int
	// MaxReaders caps the read-only connections serving View.
	// Default max(4, 2×GOMAXPROCS).
	MaxReaders int
}

func (o Options) withDefaults() Options {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 128
	}
	if o.MaxReaders <= 0 {
		o.MaxReaders = max(4, 2*runtime.GOMAXPROCS(0))
	}
	return o
}

// Store is a store.Store on one SQLite file. It is safe for concurrent
// use; Close it to stop its writer and release the file.
type Store struct {
	path    string
	opts    Options
	wdb     *sql.DB // one connection, owned by the writer goroutine
	rdb     *sql.DB // read-only connections for View
	wstmts  *statements
	readers *readers
	queue   chan *request
	closing chan struct{}
	stopped chan struct{}
	once    sync.Once
	observe atomic.Pointer[store.CommitObserver]
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Observable = (*Store)(nil)
)

// ObserveCommits reports every write transaction's commit latency and
// batch size to o from now on (store.Observable).
func (s *Store) ObserveCommits(o store.CommitObserver) { s.observe.Store(&o) }

// DefaultPath is the default database file: $XDG_DATA_HOME/takoform/host.db,
// or ~/.local/share/takoform/host.db when XDG_DATA_HOME is unset or not
// absolute. It returns "host.db" (relative to the working directory) only
// if no home directory is known.
func DefaultPath() string {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "takoform", "host.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "host.db"
	}
	return filepath.Join(home, ".local", "share", "takoform", "host.db")
}

// Open opens the database file at path, creating it (mode 0600) and its
// directory (mode 0700) on first start and tightening an existing file,
// -wal and -shm to 0600 (secureFiles), migrates its schema to the newest version
// this binary knows, and starts the writer. A file whose schema version is
// newer is refused with an error wrapping store.ErrTooNew.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := secureFiles(path); err != nil {
		return nil, err
	}
	s := &Store{
		path:    path,
		opts:    opts,
		queue:   make(chan *request, opts.MaxBatch),
		closing: make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if err := s.open(ctx); err != nil {
		return nil, errors.Join(err, s.closeDBs())
	}
	go s.writer()
	return s, nil
}

func (s *Store) open(ctx context.Context) error {
	var err error
	if s.wdb, err = sql.Open("sqlite", s.dsn(false)); err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	if err := s.wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	if err := s.checkPragmas(ctx); err != nil {
		return err
	}
	if err := migrate(ctx, s.wdb, s.path); err != nil {
		return err
	}
	if s.rdb, err = sql.Open("sqlite", s.dsn(true)); err != nil {
		return fmt.Errorf("open %s for reading: %w", s.path, err)
	}
	s.rdb.SetMaxOpenConns(s.opts.MaxReaders)
	s.rdb.SetMaxIdleConns(s.opts.MaxReaders)
	if s.wstmts, err = prepare(ctx, s.wdb); err != nil {
		return fmt.Errorf("prepare statements on %s: %w", s.path, err)
	}
	s.readers = newReaders(s.rdb, s.opts.MaxReaders)
	return nil
}

// dsn is the connection string: every connection gets the busy timeout,
// foreign keys, WAL and FULL sync; writers begin IMMEDIATE, readers are
// query_only.
func (s *Store) dsn(readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", s.opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "journal_size_limit(67108864)") // truncate the WAL to 64 MiB after a checkpoint
	// Savepoint sub-journals (one per Update function of a batch) stay in
	// memory instead of spilling to a temporary file; they only serve
	// ROLLBACK TO, never crash recovery, which the WAL does.
	q.Add("_pragma", "temp_store(MEMORY)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// 512 KiB of page cache per reader instead of SQLite's 2 MiB: the
		// host's RSS budget (ARCHITECTURE.md §7; PERFORMANCE.md, log entry
		// "Readers keep 512 KiB of SQLite page cache").
		q.Add("_pragma", "cache_size(-512)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + escapePath(s.path) + "?" + q.Encode()
}

// escapePath escapes a file path for a "file:" URI.
func escapePath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// checkPragmas fails if the file did not take WAL mode or FULL sync, so a
// silently weaker durability never goes unnoticed.
func (s *Store) checkPragmas(ctx context.Context) error {
	var mode string
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode of %s: %w", s.path, err)
	}
	var sync, fk int
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return fmt.Errorf("read synchronous mode of %s: %w", s.path, err)
	}
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("read foreign_keys of %s: %w", s.path, err)
	}
	if mode != "wal" || sync != 2 || fk != 1 {
		return fmt.Errorf("open %s: got journal_mode=%s synchronous=%d foreign_keys=%d, want wal, 2 (FULL), 1", s.path, mode, sync, fk)
	}
	return nil
}

// migrate applies the embedded migrations with goose's Provider, refusing
// a database whose goose version is newer than the newest migration.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", path, err)
	}
	if current > known {
		return fmt.Errorf("open %s: %w: the file has schema version %d, this binary knows up to %d; run a newer takoform", path, store.ErrTooNew, current, known)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s from schema version %d to %d: %w", path, current, known, err)
	}
	return nil
}

// Path is the database file this Store was opened on.
func (s *Store) Path() string { return s.path }

// Close stops the writer after its current batch, fails queued Update
// calls with ErrClosed and closes the file. It is safe to call twice.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.closing)
		<-s.stopped
		err = s.closeDBs()
	})
	return err
}

func (s *Store) closeDBs() error {
	var errs []error
	if s.readers != nil {
		errs = append(errs, s.readers.close())
	}
	if s.wstmts != nil {
		errs = append(errs, s.wstmts.close())
	}
	for _, db := range []*sql.DB{s.rdb, s.wdb} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}
