// Package store is the host's storage contract: one transactional Store
// with small typed methods, implemented by host/store/sqlite (embedded
// default) and host/store/postgres (replicas), both held to one test suite (storetest).
// Every lookup is by key or index; nothing scans a tenant or a space.
// Every string a caller passes (keys, names, ids, digests) is UTF-8
// without NUL: PostgreSQL's text holds nothing else while SQLite keeps
// any bytes, so the host refuses other text before it calls a store
// (spec/decisions/0010-operator-surface.md) and the two answer alike.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/takoform/takoform/form"
)

// Errors every implementation returns (wrapped with what was being done).
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("already exists")
	// ErrTooNew refuses a database whose schema is newer than this binary.
	ErrTooNew = errors.New("database schema is newer than this binary")
	// ErrUnavailable wraps a storage fault expected to pass: the database
	// connection was lost, the server is shutting down or starting, or an
	// Update kept losing to concurrent ones (deadlocks) past its attempts.
	// The host answers backend_unavailable (retryable,
	// spec/host-api-v1alpha3.md §3.5); the request may be sent again with
	// its Idempotency-Key.
	ErrUnavailable = errors.New("the database is unavailable")
	// ErrLocked is ClaimOperation's answer when another transaction (another
	// replica's worker) holds the operation.
	ErrLocked = errors.New("held by another transaction")
)

// Store is a durable, transactional store. Update runs fn in one write
// transaction committed (durably: fsync) iff fn returns nil; View runs fn
// in a read-only transaction. fn may be retried on a serialization
// failure or a wrong expectation (Tx.KeyStateExpectFree), so it must not
// have effects outside the Tx.
type Store interface {
	Update(ctx context.Context, fn func(Tx) error) error
	View(ctx context.Context, fn func(Tx) error) error
	Close() error
}

// ExactReader is implemented by a Store with a fast path for the host's
// exact read (spec/host-api-v1alpha3.md §3.4 (6)): the Answer of the
// resource at k created under exactly ref — the answer bytes the host
// stored with its row (Resource.Answer), or, for a row without them, the
// members of the resource Tx.Resource(k) reads that the host encodes the
// answer from — read by one statement, which is its own snapshot,
// outside any transaction (decisions
// spec/decisions/0022-exact-read-path.md,
// spec/decisions/0046-stored-answer.md and
// spec/decisions/0065-store-keeps-answer-bytes.md). It returns an error
// wrapping ErrNotFound when k holds no resource or one under another
// FormRef. The host serves the same read through View on a Store without
// it (ExactAnswerByView).
type ExactReader interface {
	ExactAnswer(ctx context.Context, k Key, ref form.FormRef) (*Answer, error)
}

// Key is a resource's host-side address (decision 0028): tenant, space,
// group, kind, name. Name uniqueness spans definition versions.
type Key struct {
	Tenant, Space, APIVersion, Kind, Name string
}

// Resource is one stored incarnation.
type Resource struct {
	Key
	UID           string
	FormRef       form.FormRef // the exact ref it was created under
	PackageDigest string       // audit evidence only
	Generation    int64
	Revision      int64
	Spec          []byte // materialised spec, canonical JSON
	SpecDigest    string
	Status        []byte // rendered wire.Status JSON
	NativeID      string // adoption claim; "" when none
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Answer is the body of the resource's answer, encoded by the host
	// from the members above (wire.EncodeResource), which CreateResource
	// and UpdateResource store with the row, verbatim, for the exact read
	// (ExactReader) to return; nil stores none. A row keeps no answer
	// when its values would not read back as given: an update whose key
	// is not the row's (the answer shows the key, which UpdateResource
	// does not rewrite) and an empty spec or status (stored as empty
	// bytes, which a store may read back as nil or as empty). An update
	// whose answer equals the row's stored one may keep none (the
	// migration triggers of repo decision 0046 cannot tell it from a
	// writer that does not know the column); the host's never does, its
	// answer showing the revision. Only writes take it: the reads of a
	// Resource leave it nil (repo decision 0065).
	Answer []byte
}

// Pin is one resolved relation of a source resource (spec/host-api-v1alpha3.md §5.5).
type Pin struct {
	SourceUID        string
	Pointer          string // concrete, e.g. /versions/0/workerVersion
	RelationPointer  string // schema pointer, e.g. /versions/*/workerVersion
	TargetAPIVersion string
	TargetKind       string
	TargetName       string
	TargetUID        string
	TargetFormRef    form.FormRef
	Binding          string // name@version#digest of the binding contract, or ""
}

// Idempotency is a replay record (spec/host-api-v1alpha3.md §3.5), keyed by lane,
// tenant, principal, space and key (spec/lane-v1beta1.md §2.5 rule 5).
// BoundUID / BoundOperation say what it retires with.
type Idempotency struct {
	Lane, Tenant, Principal, Space, Key string
	Fingerprint                         string
	Status                              int
	ETag                                string
	Body                                []byte
	BoundUID                            string
	BoundOperation                      string
	CreatedAt                           time.Time
}

// IdempotencyKey names a replay record: its lane, tenant, principal,
// space and key (spec/host-api-v1alpha3.md §3.5, spec/lane-v1beta1.md
// §2.5 rule 5). The lane is the lane's name, opaque to the store; records
// written before lanes (SQLite migration 00009, PostgreSQL 00012) hold
// LaneBeforeLanes.
type IdempotencyKey struct{ Lane, Tenant, Principal, Space, Key string }

// LaneBeforeLanes is the lane of every idempotency record, operation and
// upload a store held before it recorded lanes: the one lane hosts served
// then (spec/lane-v1beta1.md §2.5).
const LaneBeforeLanes = "forms.takoform.com/v1alpha3"

// KeyState is what a mutation of one resource key reads before it decides
// (spec/host-api-v1alpha3.md §3.4 (5)), read in this order by Tx.KeyState.
type KeyState struct {
	Replay   *Idempotency // Idempotency(replay...); nil when none or no key was given
	Resource *Resource    // Resource(k); nil when k is free
	Pending  *Operation   // PendingOperationFor(k); nil when none
	PinsTo   []Pin        // PinsToName(k): the relation holders by address
}

// ReadKeyState is Tx.KeyState through tx's single-read methods, for a
// store that gains nothing by reading them together.
func ReadKeyState(tx Tx, k Key, replay *IdempotencyKey) (*KeyState, error) {
	st := &KeyState{}
	var err error
	if replay != nil {
		if st.Replay, err = absent(tx.Idempotency(replay.Lane, replay.Tenant, replay.Principal, replay.Space, replay.Key)); err != nil {
			return nil, err
		}
	}
	if st.Resource, err = absent(tx.Resource(k)); err != nil {
		return nil, err
	}
	if st.Pending, err = absent(tx.PendingOperationFor(k)); err != nil {
		return nil, err
	}
	if st.PinsTo, err = tx.PinsToName(k.Tenant, k.Space, k.APIVersion, k.Kind, k.Name); err != nil {
		return nil, err
	}
	return st, nil
}

// absent turns ErrNotFound into a nil value and no error.
func absent[T any](v *T, err error) (*T, error) {
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// Action is what a mutation or an operation does to its resource
// (spec/host-api-v1alpha3.md §3.4 (5), (7), (8), (9)).
type Action string

// The host's mutation actions. Only apply, import and delete become
// operations; an observe always answers at once (spec/host-api-v1alpha3.md §4).
const (
	ActionApply   Action = "apply"
	ActionImport  Action = "import"
	ActionDelete  Action = "delete"
	ActionObserve Action = "observe"
)

// Operation is a durable operation record (spec/host-api-v1alpha3.md §4).
type Operation struct {
	ID        string
	Lane      string // the lane whose mutation created it (spec/lane-v1beta1.md §2.5 rule 4)
	Tenant    string
	Principal string
	Action    Action
	Done      bool
	Request   []byte // host-private JSON describing the accepted mutation
	Document  []byte // the wire.Operation JSON as last rendered; replayed byte-identically once Done
	TargetUID string
	Target    Key
	NotBefore time.Time // the worker does not commit before this instant
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Upload is an artifact upload session (spec/host-api-v1alpha3.md §3.6).
type Upload struct {
	ID             string
	Lane           string // the lane that started it (spec/lane-v1beta1.md §2.5 rule 4)
	Tenant         string
	Principal      string
	Manifest       []byte // canonical manifest JSON
	ManifestDigest string
	CreatedAt      time.Time
}

// Tx is one transaction. Methods return ErrNotFound or ErrConflict
// (wrapped) as documented, and other errors for storage faults. A
// CreateResource or ClaimIdempotency at a key this transaction read
// absent (Resource, Idempotency, KeyState) may be sent with its next
// statement or its commit: should it fail then (a UID taken), that later
// call or Update returns the error and nothing of the transaction is
// written (spec/decisions/0029-one-read-per-mutation.md).
type Tx interface {
	// Resources.
	Resource(k Key) (*Resource, error)           // ErrNotFound
	ResourceByUID(uid string) (*Resource, error) // ErrNotFound
	CreateResource(r *Resource) error            // ErrConflict if the key or UID exists
	UpdateResource(r *Resource) error            // by UID; ErrNotFound
	DeleteResource(uid string) error             // also drops its pins; ErrNotFound
	// ResourceByNativeID finds the live claimant of a native id in a tenant.
	ResourceByNativeID(tenant, nativeID string) (*Resource, error) // ErrNotFound
	// ResourcesOfKind lists every live resource of (apiVersion, kind) in
	// every tenant and space, ordered by UID (none: nil, no error), read
	// through an index on (api_version, kind): the data plane's desired
	// state, which starts from the routable kinds (spec/runtime-v1.md §9.1).
	ResourcesOfKind(apiVersion, kind string) ([]*Resource, error)

	// Relations: the pins a source holds and the reverse index.
	Pins(sourceUID string) ([]Pin, error)
	ReplacePins(sourceUID string, pins []Pin) error
	PinsTo(targetUID string) ([]Pin, error)
	// PinsToName finds pins naming a target by address, whatever UID they
	// hold (drift detection after a target is replaced).
	PinsToName(tenant, space, apiVersion, kind, name string) ([]Pin, error)

	// Idempotency records.
	Idempotency(lane, tenant, principal, space, key string) (*Idempotency, error) // ErrNotFound
	PutIdempotency(r *Idempotency) error                                          // insert or replace
	// ClaimIdempotency inserts r only if its key is unused: ErrConflict when
	// a record with the key exists, so one key sent to two replicas at the
	// same moment is recorded (and so executed) once.
	ClaimIdempotency(r *Idempotency) error
	RetireIdempotency(uid string) (int, error) // drop records bound to uid
	ExpireIdempotency(before time.Time) (int, error)

	// Operations.
	Operation(id string) (*Operation, error) // ErrNotFound
	PutOperation(op *Operation) error        // insert or replace
	// ClaimOperation reads operation id and holds it for this transaction:
	// ErrNotFound when unknown, ErrLocked when another transaction holds it
	// (it does not wait), so two workers never commit one operation twice.
	ClaimOperation(id string) (*Operation, error)
	// DueOperations lists up to limit unfinished operations whose
	// NotBefore has passed, oldest first.
	DueOperations(now time.Time, limit int) ([]*Operation, error)
	// PendingOperationFor finds an unfinished operation targeting k.
	PendingOperationFor(k Key) (*Operation, error) // ErrNotFound

	// KeyState reads what a mutation of k decides on, as the methods named
	// in KeyState's fields would (locks included), in one round trip where
	// the store can (spec/decisions/0029-one-read-per-mutation.md).
	KeyState(k Key, replay *IdempotencyKey) (*KeyState, error)
	// KeyStateExpectFree is KeyState for a mutation that expects k free
	// (no resource, no pending operation, no pins naming it) and replay
	// unrecorded: a create under If-None-Match: *. A store may answer the
	// empty KeyState without reading; it then verifies the expectation in
	// the transaction, after the locks KeyState takes, before anything fn
	// built on it leaves Update (the commit, or an error fn returns), and
	// when it was wrong commits nothing and runs fn again, where this
	// method reads as KeyState does
	// (spec/decisions/0048-postgres-create-one-round-trip.md).
	KeyStateExpectFree(k Key, replay *IdempotencyKey) (*KeyState, error)

	// Artifacts: bytes are stored once by digest; holdings say which
	// tenant may see them.
	BlobSize(digest string) (int64, error) // ErrNotFound
	Blob(digest string) ([]byte, error)    // ErrNotFound
	PutBlob(digest string, data []byte) error
	Holds(tenant, digest string) (bool, error)
	Hold(tenant, digest string) error
	Manifest(digest string) ([]byte, error) // ErrNotFound
	PutManifest(digest string, doc []byte) error
	Upload(id string) (*Upload, error) // ErrNotFound
	PutUpload(u *Upload) error
	DeleteUpload(id string) error

	// Claims are tenant-wide unique names a resource holds across spaces
	// (custom-domain hostnames, spec/host-api-v1alpha3.md §6.5). PutClaim is ErrConflict when
	// another uid holds the claim; DeleteResource releases a resource's
	// claims.
	ClaimHolder(tenant, claim string) (uid string, err error) // ErrNotFound
	PutClaim(tenant, claim, uid string) error
	ReleaseClaims(uid string) error

	// Setting returns a named host setting (e.g. the prepare-digest key),
	// ErrNotFound when unset; PutSetting stores one if it is still unset
	// and returns the value now stored.
	Setting(name string) ([]byte, error)
	PutSetting(name string, value []byte) ([]byte, error)

	// RebindIdempotency binds every record bound to operationID to uid
	// (a settled 202 follows its operation's outcome, spec/host-api-v1alpha3.md §3.5).
	RebindIdempotency(operationID, uid string) error

	// Counter returns the next value of a named monotonic sequence
	// (UIDs, operation and upload ids), starting at 1.
	Next(sequence string) (int64, error)

	// Readiness, gauges, quota usage, artifact references, sweeps.
	Maintenance

	// edge.kv entries, edge.queue messages and edge.objects metadata of
	// the runtime gateway (kv.go, queue.go, objects.go), and the sealed
	// sensitive values of workers (secrets.go).
	KV
	Queue
	Objects
	Secrets

	// The durable migration ledgers of SQLite databases (ledger.go).
	MigrationLedgers

	// Cron firings of the events dispatcher (events.go).
	Firings
	Leases
}
