package gateway

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sqlitedrv "modernc.org/sqlite"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// sqlFiles holds the SQLite databases of SQLiteDatabase resources: one
// file per UID, dataDir/sql/<uid>.sqlite (0600, in a 0700 directory),
// created on first use, never the host's state file
// (spec/runtime-v1.md §5.3). Each is opened once with one connection, so
// the calls of one database run one after another; every call is one
// SQLite transaction.
//
// On a host whose replicas share a store holding the databases' pages
// (owner set, store.SQLPages), the file is this replica's copy of a
// database it owns, and the store's pages are the database
// (sqlowner.go; repo decision 0063).
type sqlFiles struct {
	g     *Gateway
	mu    sync.Mutex
	dbs   map[string]*sqlDB
	owner *sqlOwner
}

type sqlDB struct {
	mu      sync.Mutex // held by a call, and by removal
	db      *sql.DB    // nil while a replicated database has no copy here
	removed bool
	pol     policy
	// On a replicated host: the lease epoch the copy is current under
	// (zero: none) and the lease's deadline as last taken or renewed.
	fence store.Fence
	until time.Time
	// other is another replica's lease as last read, so calls forward to
	// it without reading the lease again until its deadline (sqlpeer.go
	// forgets it when the owner does not answer as one).
	other *notOwner
}

func (f *sqlFiles) init(g *Gateway) {
	f.g = g
	f.dbs = map[string]*sqlDB{}
}

const sqlPageSize = store.SQLPageBytes

func (f *sqlFiles) dir() string {
	if f.owner != nil {
		return f.owner.dir
	}
	return filepath.Join(f.g.dataDir, "sql")
}

// SQLitePath is where the database of the SQLiteDatabase with uid lives
// under dataDir (for backups and host copy).
func SQLitePath(dataDir, uid string) string {
	return filepath.Join(dataDir, "sql", uid+".sqlite")
}

func (f *sqlFiles) path(uid string) string { return filepath.Join(f.dir(), uid+".sqlite") }

// open returns uid's database, opening (and creating) its file on first
// use; on a replicated host the copy is made by the owner's hold.
func (f *sqlFiles) open(uid string) (*sqlDB, error) {
	if !wire.ValidUID(uid) {
		return nil, fmt.Errorf("UID %q cannot name a file", uid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.dbs[uid]; d != nil {
		return d, nil
	}
	d := &sqlDB{}
	if f.owner == nil {
		db, err := f.openFile(uid)
		if err != nil {
			return nil, err
		}
		d.db = db
	}
	f.dbs[uid] = d
	return d, nil
}

// openFile opens uid's file, creating it empty when absent.
func (f *sqlFiles) openFile(uid string) (*sql.DB, error) {
	if err := ensureDir(f.dir()); err != nil {
		return nil, err
	}
	path := f.path(uid)
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) // SQLite's journal takes the file's mode
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return nil, err
	}
	// page_size holds only for a new file (SQLite's default, 4096, for an
	// old one); max_page_count is per connection and worker SQL cannot
	// change it (its PRAGMA is refused). A replica's copy runs in WAL
	// mode with no automatic checkpoint, so the owner reads each
	// transaction's pages from the log; it needs no fsync, since the
	// store holds the database and a copy is rebuilt from it whenever
	// this process did not make it (repo decision 0063).
	mode := "&_pragma=synchronous(FULL)"
	if f.owner != nil {
		mode = "&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_pragma=synchronous(OFF)"
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)" + mode + "&_defensive=1" +
		fmt.Sprintf("&_pragma=page_size(%d)&_pragma=max_page_count(%d)", sqlPageSize, max(f.g.sqlLimit/sqlPageSize, 16))
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

// run runs one call on uid's database; on a replicated host it returns
// a *notOwner error when another replica owns it.
func (f *sqlFiles) run(ctx context.Context, uid string, c sqlCall) ([]result, error) {
	var results []result
	var ferr *Error
	err := f.with(ctx, uid, func(e *engine, pol *policy) {
		pol.fixedSchema = c.beta
		results, ferr = call(ctx, e, pol, c)
		if ferr != nil && ferr.full {
			f.g.log.Warn("gateway: a SQLite database is full", "uid", uid, "err", ferr.cause)
			ferr = sqlErrorf("the database is full: it reached the host's limit of %d bytes per SQLite database (or the host's disk is full); delete rows or ask the host's operator to raise the limit; nothing of this call was applied",
				f.limitBytes())
		}
	})
	var no *notOwner
	if errors.As(err, &no) {
		return nil, no
	}
	if err != nil {
		return nil, asError(err)
	}
	if ferr != nil {
		return nil, ferr
	}
	return results, nil
}

// limitBytes is the size limit of one database file, in bytes.
func (f *sqlFiles) limitBytes() int64 { return max(f.g.sqlLimit/sqlPageSize, 16) * sqlPageSize }

// with runs fn on uid's database, holding it for the call, with the
// policy registered as the connection's authorizer and ATTACH disabled.
// A database removed meanwhile is errBindingRefused; a driver or
// connection fault is backend_unavailable. On a replicated host it first
// holds the database's lease (a *notOwner error when another replica
// does) and afterwards stores the pages fn's transactions committed; a
// failure to store them drops this copy and is the call's answer.
func (f *sqlFiles) with(ctx context.Context, uid string, fn func(*engine, *policy)) error {
	d, err := f.open(uid)
	if err != nil {
		return unavailable(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removed {
		return errBindingRefused
	}
	if f.owner != nil {
		if err := f.owner.hold(ctx, f, uid, d); err != nil {
			return err
		}
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return unavailable(err)
	}
	defer func() {
		if err := conn.Close(); err != nil {
			f.g.log.Warn("gateway: closing a SQLite connection failed", "uid", uid, "err", err)
		}
	}()
	var shipErr error
	err = conn.Raw(func(dc any) error {
		reg, ok := dc.(sqlitedrv.AuthorizerRegisterer)
		if !ok {
			return errors.New("the sqlite driver offers no authorizer")
		}
		e, err := engineOf(dc)
		if err != nil {
			return err
		}
		if err := reg.RegisterAuthorizer(d.pol.authorize); err != nil {
			return err
		}
		e.noAttach()
		fn(e, &d.pol)
		if f.owner != nil {
			shipErr = f.owner.ship(uid, d, e, f.path(uid)+"-wal")
		}
		return nil
	})
	if shipErr != nil {
		f.owner.discard(f, uid, d)
		return shipErr
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// remove closes uid's database and deletes its files.
func (f *sqlFiles) remove(uid string) error {
	f.mu.Lock()
	d := f.dbs[uid]
	delete(f.dbs, uid)
	f.mu.Unlock()
	var errs []error
	if d != nil {
		d.mu.Lock()
		if d.db != nil {
			errs = append(errs, d.db.Close())
			d.db = nil
		}
		d.removed = true
		d.mu.Unlock()
	}
	errs = append(errs, removeFiles(f.path(uid)))
	return errors.Join(errs...)
}

// removeFiles deletes a database file and its journals.
func removeFiles(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sweep removes the database of every UID under the directory that names
// no live SQLiteDatabase.
func (f *sqlFiles) sweep(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(f.dir())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ent := range entries {
		uid, ok := strings.CutSuffix(ent.Name(), ".sqlite")
		if !ok || !wire.ValidUID(uid) {
			continue
		}
		live, err := f.g.live(ctx, uid, KindSQL)
		if err != nil {
			return n, err
		}
		if live {
			continue
		}
		if err := f.remove(uid); err != nil {
			return n, err
		}
		f.g.log.Info("gateway: removed the SQLite database of a deleted SQLiteDatabase", "uid", uid)
		n++
	}
	return n, nil
}

func (f *sqlFiles) closeAll() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for uid, d := range f.dbs {
		d.mu.Lock()
		if d.db != nil {
			errs = append(errs, d.db.Close())
			d.db = nil
		}
		if f.owner != nil {
			f.owner.release(uid, d)
		}
		d.removed = true
		d.mu.Unlock()
		delete(f.dbs, uid)
	}
	return errors.Join(errs...)
}

// RemoveSQLite closes and deletes the database of the SQLiteDatabase
// with uid, at once; the host calls it after committing that resource's
// delete (Sweep also finds what it missed).
func (g *Gateway) RemoveSQLite(uid string) error { return g.sql.remove(uid) }

type sqlHandler struct {
	g      *Gateway
	tenant string
}

// serve answers POST /sql/v1/{execute,query,transaction} for databases
// of the v1alpha1 family and POST /sql/v1beta1/{…} for those of the
// v1beta1 family (the projection of each family speaks its own route; a
// database of the other family is refused): a body {sql, params?} or
// {statements: [{sql, params?}]}, an answer that is a statement result or
// {results: [...]}. On a replicated host a database another replica owns
// is served there, its answer relayed as it is (sqlpeer.go).
func (h *sqlHandler) serve(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	beta := strings.HasPrefix(r.URL.Path, "/sql/v1beta1/")
	switch op {
	case "execute", "transaction", "query":
	default:
		h.g.writeError(w, invalidArgument("no SQL operation %q", op))
		return
	}
	uid, e := h.g.bindingUID(r, h.tenant, KindSQL)
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	if h.g.noSQL != "" {
		h.g.writeError(w, errorf(http.StatusServiceUnavailable, "backend_unavailable", "%s", h.g.noSQL))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxSQLRequestBytes+1))
	if err != nil {
		h.g.writeError(w, invalidArgument("the request could not be read: %v", err))
		return
	}
	c, e := decodeSQLCall(op, beta, body)
	if e != nil {
		h.g.writeError(w, e)
		return
	}
	err = h.g.store.View(r.Context(), func(tx store.Tx) error {
		res, e := h.g.resolve(tx, h.tenant, KindSQL, uid)
		if e != nil {
			return e
		}
		if (res.APIVersion == groupBeta) != beta {
			h.g.log.Warn("gateway: request refused: the projection speaks the other family's edge.sql",
				"tenant", h.tenant, "uid", uid, "resourceGroup", res.APIVersion, "path", r.URL.Path)
			return errBindingRefused
		}
		return nil
	})
	if err != nil {
		h.g.fail(w, r, h.tenant, err)
		return
	}
	var results []result
	relayed := false
	err = h.g.sql.onOwner(r.Context(), uid, func() (err error) {
		results, err = h.g.sql.run(r.Context(), uid, c)
		return err
	}, func(holder string) error {
		status, ctype, answer, err := h.g.sql.owner.post(r.Context(), holder,
			PeerPathPrefix+"sql/"+url.PathEscape(uid)+"/"+op+"?family="+familyOf(beta), body)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, err = w.Write(answer)
		h.g.delivered(err)
		relayed = true
		return nil
	})
	if !relayed {
		h.g.answerSQL(w, r, h.tenant, op, results, err)
	}
}

// decodeSQLCall reads one call's body: a statement, or a transaction's
// statements.
func decodeSQLCall(op string, beta bool, body []byte) (sqlCall, *Error) {
	if len(body) > MaxSQLRequestBytes {
		return sqlCall{}, sqlErrorf("one call carries at most %d bytes of statements and params; send less per call", MaxSQLRequestBytes)
	}
	stmts, e := decodeCall(op, body)
	if e != nil {
		return sqlCall{}, e
	}
	mode := authExecute
	if op == "query" {
		mode = authQuery
	}
	return sqlCall{mode: mode, transaction: op == "transaction", beta: beta, stmts: stmts}, nil
}

// answerSQL writes a call's results, or its refusal.
func (g *Gateway) answerSQL(w http.ResponseWriter, r *http.Request, tenant, op string, results []result, err error) {
	if err != nil {
		g.fail(w, r, tenant, err)
		return
	}
	if op == "transaction" {
		g.writeJSON(w, map[string]any{"results": results})
		return
	}
	g.writeJSON(w, results[0])
}

func decodeCall(op string, body []byte) ([]statement, *Error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if op == "transaction" {
		var req struct {
			Statements []statement `json:"statements"`
		}
		if err := dec.Decode(&req); err != nil {
			return nil, invalidArgument("transaction takes {statements: [{sql, params?}, …]}: %v", err)
		}
		switch n := len(req.Statements); {
		case n == 0:
			return nil, invalidArgument("transaction takes 1 to %d statements; it got none", MaxSQLStatements)
		case n > MaxSQLStatements:
			return nil, sqlErrorf("a transaction holds at most %d statements; this one has %d", MaxSQLStatements, n)
		}
		return req.Statements, nil
	}
	var st statement
	if err := dec.Decode(&st); err != nil {
		return nil, invalidArgument("%s takes {sql, params?}: %v", op, err)
	}
	return []statement{st}, nil
}
