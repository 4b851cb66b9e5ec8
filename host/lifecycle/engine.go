// Package lifecycle is the host's lifecycle engine: it commits a mutation
// of a resource (apply, import, observe, delete) inside a store
// transaction the caller holds, runs every check of
// spec/host-api-v1alpha3.md §3.4 (5) in its order (incarnation binding,
// relations and family rules, fences, capability, prepare binding, quotas),
// writes the resource with its pins, rendering and answer bytes, re-renders
// what the change affects, and accepts and settles operations
// (spec/host-api-v1alpha3.md §4). It returns a plain Outcome, never an HTTP
// answer: routes, authentication, intake, idempotency records and the
// answer's status, ETag and body are the host's (package host;
// ARCHITECTURE.md §2, §3.1 D24, D25; repo decision 0067).
package lifecycle

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/host/store"
)

// Config is what an Engine needs. Catalog and Secret are required; a nil
// Family is NoFamily and a nil Now is time.Now.
type Config struct {
	// Catalog is every installed Form and Binding, keyed by exact ref
	// host-wide (the lanes only choose what each answers of it).
	Catalog *form.Catalog
	// Family supplies the family semantics (the Edge rules).
	Family Family
	// Quotas are the per-tenant limits (quota.go).
	Quotas Quotas
	// Secret keys the prepare binding's MAC (Engine.PrepareDigest); the
	// host keeps it in its store so replicas agree.
	Secret []byte
	// Now is the clock of an operation's settle and poll.
	Now func() time.Time
}

// Engine commits mutations. It keeps nothing about a resource between
// calls (ARCHITECTURE.md §5): every decision reads the transaction it is
// handed. It is safe for concurrent use.
type Engine struct {
	catalog *form.Catalog
	family  Family
	quotas  Quotas
	secret  []byte
	now     func() time.Time
	macs    sync.Pool // *macState: HMAC-SHA-256 keyed with secret, for reuse (PrepareDigest)
}

// New returns the Engine of cfg.
func New(cfg Config) *Engine {
	e := &Engine{catalog: cfg.Catalog, family: cfg.Family, quotas: cfg.Quotas, secret: cfg.Secret, now: cfg.Now}
	if e.family == nil {
		e.family = NoFamily{}
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Outcome is a committed mutation, plain: what the host turns into an
// answer (status, ETag and body are the host's).
type Outcome struct {
	// Action is the mutation's action.
	Action store.Action
	// Resource is the resource as committed (apply, import, observe):
	// its Answer holds the answer bytes when this commit wrote the row,
	// nil when the row was unchanged. Nil after a delete.
	Resource *store.Resource
	// Created is true when an apply or import created a new incarnation.
	Created bool
	// UID is the live incarnation the outcome reports, "" for none (a
	// delete, or an accepted operation).
	UID string
	// Operation is the operation an accepted mutation was recorded as
	// (Engine.Accept), nil otherwise; its Document is the pending
	// wire.Operation.
	Operation *store.Operation
}

// formatCounter is a generation or revision as the wire writes it
// (spec/host-api-v1alpha3.md §1.5: a decimal string).
func formatCounter(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode: %v", err))
	}
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
