// Package gateway serves the bindings a deployed worker reaches in the
// host's own storage (spec/runtime-v1.md §5): edge.kv and the edge.queue
// producer from the host store (kv.go, queue.go), edge.objects with
// metadata in the store and bodies as files under the host's data
// directory (objects*.go), and edge.sql from one SQLite file per
// SQLiteDatabase UID under the data directory (sqlfiles.go, sqlexec.go).
// The JavaScript projections of host/runtime/projection are its only
// clients.
//
// The host serves ForTenant(tenant) on a unix socket only that tenant's
// engine process (shard) can reach. workerd adds the header
// Takoform-Binding: <resource UID> to every request a binding sends
// (injectRequestHeaders of its external service), so tenant code neither
// sets nor sees it; the gateway serves a request only when that header
// appears exactly once and names a live resource of this tenant, of the
// Form kind the route serves (EdgeKVNamespace for /kv/, SQLiteDatabase for
// /sql/, AtLeastOnceQueue for /queue/, ObjectBucket for /objects/), of the
// edge family; anything else is refused and logged
// (spec/runtime-v1.md §10.4). Nothing else in a request names a resource.
//
// The wire between projection and gateway is internal (it changes with
// both together): routes under /kv/v1/, /queue/v1/, /objects/v1/,
// /sql/v1/ (the v1alpha1 edge.sql) and /sql/v1beta1/ (the v1beta1 one,
// repo decision 0056), bytes as raw bodies,
// failures as {"error":{"code","message"}} where code is the Interface
// error code the projection names its Error after (spec/runtime-v1.md §5.0).
// Why it is built so: repo decision 0051.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/takoform/takoform/forms/edge"
	"github.com/takoform/takoform/host/store"
)

// BindingHeader carries the UID of the resource a binding names, set by
// workerd outside the isolate.
const BindingHeader = "Takoform-Binding"

// The gateway serves the data Forms of both Edge groups (forms/edge.IsGroup;
// spec/runtime-v1.md §0.2, spec/lane-v1beta1.md §7.1), each under its own
// family's contract: a binding's limits are those of the group of the
// resource it names (limitsOf), and a SQLiteDatabase's edge.sql is that
// of its group (tagged values under /sql/v1/, untagged ones, no schema
// change at runtime and the byte limits of sqlbeta.go under /sql/v1beta1/).

// The limits lane v1beta1 moved (spec/lane-v1beta1.md §7.1); every other
// binding limit is the same in both groups.
const (
	MaxKVKeyBytesV1beta1        = 467
	MaxObjectKeyBytesV1beta1    = 979
	MaxQueueMessageBytesV1beta1 = 127000
)

// groupLimits are the limits in which the two groups' contracts differ.
type groupLimits struct {
	kvKeyBytes        int // edge.kv maxKeyBytes, also the prefix's characters
	objectKeyBytes    int // edge.objects maxKeyBytes, also the prefix's bytes
	queueMessageBytes int // edge.queue maxMessageBytes
}

// limitsOf is the limits of the Edge group; any other group (a UID that
// names no resource, which the binding check refuses) gets v1alpha1's.
func limitsOf(group string) groupLimits {
	if group == edge.GroupV1beta1 {
		return groupLimits{MaxKVKeyBytesV1beta1, MaxObjectKeyBytesV1beta1, MaxQueueMessageBytesV1beta1}
	}
	return groupLimits{MaxKVKeyBytes, MaxObjectKeyBytes, MaxQueueMessageBytes}
}

// limitsFor is the limits of the group of the resource uid names, read
// before the request's transaction to check its arguments. A UID names one
// resource, of one group, for its whole life, so the group is cached; a
// UID that names no resource gets v1alpha1's limits and is refused by the
// binding check inside the transaction.
func (g *Gateway) limitsFor(ctx context.Context, uid string) (groupLimits, error) {
	if cached, ok := g.groups.Load(uid); ok {
		if group, ok := cached.(string); ok {
			return limitsOf(group), nil
		}
	}
	var group string
	err := g.store.View(ctx, func(tx store.Tx) error {
		res, err := tx.ResourceByUID(uid)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		group = res.APIVersion
		return nil
	})
	if err != nil {
		return groupLimits{}, unavailable(err)
	}
	if group != "" {
		g.groups.Store(uid, group)
	}
	return limitsOf(group), nil
}

// The Form kinds behind each route (forms/edge).
const (
	KindKV     = "EdgeKVNamespace"
	KindSQL    = "SQLiteDatabase"
	KindQueue  = "AtLeastOnceQueue"
	KindBucket = "ObjectBucket"
)

// DefaultKVStorageBytes is a tenant's default limit on the bytes of its
// edge.kv entries (store.KVEntry.Size summed, store.Usage.KVBytes): 1 GiB.
// DefaultQueueStorageBytes is the same for the bodies of its stored
// edge.queue messages (store.Usage.QueueBytes).
// DefaultSQLDatabaseBytes bounds each SQLite database file.
const (
	DefaultKVStorageBytes    = 1 << 30
	DefaultQueueStorageBytes = 1 << 30
	DefaultSQLDatabaseBytes  = 1 << 30
)

// Gateway serves the store-backed bindings of every tenant. It is safe for
// concurrent use.
type Gateway struct {
	store       store.Store
	dataDir     string
	log         *slog.Logger
	now         func() time.Time
	kvLimit     int64
	queueLimit  int64
	sqlLimit    int64
	objectLimit int64
	objLocks    objectLocks
	staged      stagedBodies
	// chunks holds object bodies when the store does (store.ObjectBodies);
	// nil keeps them in files under dataDir.
	chunks store.ObjectBodies
	// noSQL, when not "", is why SQLiteDatabase bindings are not served:
	// no data directory and no store that holds them (New).
	noSQL string

	keyMu     sync.Mutex
	cursorKey []byte // kvCursorKey

	sql sqlFiles

	groups sync.Map // resource UID → its Form group (limitsFor)

	sent atomic.Pointer[func()] // OnQueueSend
}

// OnQueueSend sets what a committed queue send calls (nil: nothing): the
// events dispatcher's wake, so an idle consumer sees a send at once
// (spec/runtime-v1.md §2.6). It must not block.
func (g *Gateway) OnQueueSend(f func()) {
	if f == nil {
		g.sent.Store(nil)
		return
	}
	g.sent.Store(&f)
}

// queueSent calls the OnQueueSend hook, if any.
func (g *Gateway) queueSent() {
	if f := g.sent.Load(); f != nil {
		(*f)()
	}
}

// Option configures a Gateway.
type Option func(*Gateway)

// WithKVStorageLimit sets each tenant's limit on the bytes of its edge.kv
// entries (default DefaultKVStorageBytes); a put past it is refused with
// value_too_large naming the limit. n ≤ 0 keeps the default.
func WithKVStorageLimit(n int64) Option {
	return func(g *Gateway) {
		if n > 0 {
			g.kvLimit = n
		}
	}
}

// WithQueueStorageLimit sets each tenant's limit on the bytes of its
// stored queue messages (default DefaultQueueStorageBytes); a send past it
// is refused with message_too_large naming the limit. n ≤ 0 keeps the
// default.
func WithQueueStorageLimit(n int64) Option {
	return func(g *Gateway) {
		if n > 0 {
			g.queueLimit = n
		}
	}
}

// WithSQLDatabaseLimit bounds each SQLite database's file (default
// DefaultSQLDatabaseBytes, rounded down to whole 4096-byte pages, at least
// 16 pages): a write past it fails sql_error naming the limit. n ≤ 0 keeps
// the default.
func WithSQLDatabaseLimit(n int64) Option {
	return func(g *Gateway) {
		if n > 0 {
			g.sqlLimit = n
		}
	}
}

// WithObjectStorageLimit sets each tenant's limit on the bytes of its
// objects and uploaded parts (default DefaultObjectStorageBytes, 10 GiB); a
// write past it is refused with value_too_large naming the limit. n ≤ 0
// keeps the default.
func WithObjectStorageLimit(n int64) Option {
	return func(g *Gateway) {
		if n > 0 {
			g.objectLimit = n
		}
	}
}

// WithClock sets the clock for TTLs (default time.Now).
func WithClock(now func() time.Time) Option { return func(g *Gateway) { g.now = now } }

// New returns a Gateway over st that keeps SQLite databases under
// dataDir/sql (created 0700 on first use; never the host's state file),
// and object bodies in st when it holds them (store.ObjectBodies), else
// under dataDir/objects. With dataDir "" SQLiteDatabases are served only
// on a store that holds them (WithSQLOwnership), else refused. A nil
// logger discards.
func New(st store.Store, dataDir string, logger *slog.Logger, opts ...Option) *Gateway {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{store: st, dataDir: dataDir, log: logger, now: time.Now, kvLimit: DefaultKVStorageBytes, queueLimit: DefaultQueueStorageBytes,
		sqlLimit: DefaultSQLDatabaseBytes, objectLimit: DefaultObjectStorageBytes}
	if ob, ok := st.(store.ObjectBodies); ok {
		g.chunks = ob
	}
	g.sql.init(g)
	for _, o := range opts {
		o(g)
	}
	if dataDir == "" && g.sql.owner == nil {
		g.noSQL = "this host keeps no SQLiteDatabase files: it was started with no worker data directory"
	}
	return g
}

// Close closes the SQLite databases the gateway holds open.
func (g *Gateway) Close() error { return g.sql.closeAll() }

// ForTenant is the handler of tenant's gateway socket.
func (g *Gateway) ForTenant(tenant string) http.Handler {
	mux := http.NewServeMux()
	kv := &kvHandler{g: g, tenant: tenant}
	mux.HandleFunc("GET /kv/v1/value", kv.get)
	mux.HandleFunc("PUT /kv/v1/value", kv.put)
	mux.HandleFunc("DELETE /kv/v1/value", kv.del)
	mux.HandleFunc("GET /kv/v1/keys", kv.list)
	q := &queueHandler{g: g, tenant: tenant}
	mux.HandleFunc("POST /queue/v1/send", q.send)
	mux.HandleFunc("POST /queue/v1/batch", q.batch)
	ob := &objectHandler{g: g, tenant: tenant}
	mux.HandleFunc("PUT /objects/v1/stage", ob.stage)
	mux.HandleFunc("GET /objects/v1/head", ob.head)
	mux.HandleFunc("GET /objects/v1/object", ob.get)
	mux.HandleFunc("PUT /objects/v1/object", ob.put)
	mux.HandleFunc("DELETE /objects/v1/object", ob.del)
	mux.HandleFunc("GET /objects/v1/list", ob.list)
	mux.HandleFunc("POST /objects/v1/uploads", ob.create)
	mux.HandleFunc("PUT /objects/v1/part", ob.part)
	mux.HandleFunc("POST /objects/v1/complete", ob.complete)
	mux.HandleFunc("DELETE /objects/v1/upload", ob.abort)
	sq := &sqlHandler{g: g, tenant: tenant}
	mux.HandleFunc("POST /sql/v1/{op}", sq.serve)
	mux.HandleFunc("POST /sql/v1beta1/{op}", sq.serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		g.writeError(w, &Error{Status: http.StatusNotFound, Code: "backend_unavailable", Message: "no gateway route " + r.Method + " " + r.URL.Path})
	})
	return mux
}

// Error is a refusal the projection raises as an Error named Code.
type Error struct {
	Status  int
	Code    string
	Message string
	cause   error // a store fault, logged, never sent
	full    bool  // SQLITE_FULL: the database reached its size limit
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, format string, a ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

// invalidArgument is a wrong argument the projection should have caught;
// it raises a TypeError (spec/runtime-v1.md §5.0).
func invalidArgument(format string, a ...any) *Error {
	return errorf(http.StatusBadRequest, "invalid_argument", format, a...)
}

func (g *Gateway) writeError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	g.delivered(json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}}))
}

func (g *Gateway) writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	g.delivered(json.NewEncoder(w).Encode(v))
}

// delivered logs an answer that did not reach the engine (it went away);
// nothing else can be done once the status is out.
func (g *Gateway) delivered(err error) {
	if err != nil {
		g.log.Debug("gateway: answer not delivered", "err", err)
	}
}

// errBindingRefused is what tenant code sees when its request names no
// resource it may reach; the reason goes to the host's log only.
var errBindingRefused = errorf(http.StatusForbidden, "backend_unavailable", "this binding names no live resource of its kind in this tenant")

// bindingUID returns the one UID workerd injected, or a refusal.
func (g *Gateway) bindingUID(r *http.Request, tenant, kind string) (string, *Error) {
	vals := r.Header.Values(BindingHeader)
	if len(vals) != 1 || vals[0] == "" || strings.ContainsAny(vals[0], ", \t") {
		g.log.Warn("gateway: request refused: binding header missing or repeated",
			"tenant", tenant, "kind", kind, "path", r.URL.Path, "values", len(vals))
		return "", errBindingRefused
	}
	return vals[0], nil
}

// checkBinding verifies in tx that uid is a live resource of tenant of
// kind in the edge family.
func (g *Gateway) checkBinding(tx store.Tx, tenant, kind, uid string) *Error {
	_, e := g.resolve(tx, tenant, kind, uid)
	return e
}

// resolve is checkBinding returning the resource (nil with the refusal).
func (g *Gateway) resolve(tx store.Tx, tenant, kind, uid string) (*store.Resource, *Error) {
	res, err := tx.ResourceByUID(uid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		g.log.Warn("gateway: request refused: binding names no live resource", "tenant", tenant, "kind", kind, "uid", uid)
		return nil, errBindingRefused
	case err != nil:
		return nil, unavailable(err)
	case res.Tenant != tenant || res.Kind != kind || !edge.IsGroup(res.APIVersion):
		g.log.Warn("gateway: request refused: binding names a resource of another tenant or kind",
			"tenant", tenant, "kind", kind, "uid", uid, "resourceTenant", res.Tenant, "resourceKind", res.Kind, "resourceGroup", res.APIVersion)
		return nil, errBindingRefused
	}
	return res, nil
}

// unavailable is a store fault: retryable backend_unavailable, the detail
// logged by the caller's handler, not sent.
func unavailable(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "backend_unavailable", Message: "the host's storage could not be reached; try again", cause: err}
}

// asError turns err into the refusal to send: an *Error as it is,
// anything else backend_unavailable.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return unavailable(err)
}

// fail writes err and logs a store fault.
func (g *Gateway) fail(w http.ResponseWriter, r *http.Request, tenant string, err error) {
	e := asError(err)
	if e.cause != nil {
		g.log.Error("gateway: storage fault", "tenant", tenant, "path", r.URL.Path, "err", e.cause)
	}
	g.writeError(w, e)
}

// Sweep removes what deleted resources and expired entries leave: up to
// limit expired edge.kv entries ("kv_entries"), every SQLite file under
// the data directory (or copy of a replica) whose SQLiteDatabase no
// longer exists ("sql_databases"), the object bodies of deleted ObjectBuckets
// ("object_buckets") and object temp files a write never finished. It
// returns what it removed by kind. The host calls it on its sweep
// interval (host.Config.DataSweep); it is safe beside serving.
func (g *Gateway) Sweep(ctx context.Context, limit int) (map[string]int, error) {
	out := map[string]int{}
	err := g.store.Update(ctx, func(tx store.Tx) error {
		n, err := tx.KVSweepExpired(g.now(), limit)
		out["kv_entries"] = n
		return err
	})
	if err != nil {
		return out, err
	}
	if g.dataDir != "" || g.sql.owner != nil { // files, or a replica's copies (repo decision 0063)
		if out["sql_databases"], err = g.sql.sweep(ctx); err != nil {
			return out, err
		}
	}
	swept := "object_buckets"
	if g.chunks != nil {
		swept = "object_bodies"
	}
	out[swept], err = g.sweepObjects(ctx, func(uid string) (bool, error) { return g.live(ctx, uid, KindBucket) })
	return out, err
}

// live reports whether uid names a live resource of kind in the edge
// family.
func (g *Gateway) live(ctx context.Context, uid, kind string) (bool, error) {
	live := false
	err := g.store.View(ctx, func(tx store.Tx) error {
		res, err := tx.ResourceByUID(uid)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		live = err == nil && res.Kind == kind && edge.IsGroup(res.APIVersion)
		return err
	})
	return live, err
}

// ensureDir creates dir 0700 if missing.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
